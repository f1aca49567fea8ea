// Memory is bounded by bytes, not pages (issue 16): every event carries about 100 KB of metadata
// (the simulator's --event-metadata-bytes), so a page of 100 events is about 10 MB, 25 times a
// page of 1000 ordinary events. NDJSON and Parquet exports with n = 10 and concurrency 8 under
// several `source.maxBufferedBytes` budgets: peak RSS must follow the budget, staying within the
// budget plus a constant, whatever the page size.
import { fmt, runExport, table, withSimulator } from '../lib/harness.js';

export const title = 'Memory bounded by bytes: items with 100 KB of metadata (issue 16)';

const MIB = 2 ** 20;

export async function run({
  items: events = 10_000,
  metadataBytes = 100_000,
  limit = 100,
  budgetsMiB = [16, 64, 256],
} = {}) {
  return withSimulator({ events, eventMetadataBytes: metadataBytes }, async (sim) => {
    const rows = [];
    const figures = {};
    for (const format of ['ndjson', 'parquet']) {
      for (const budget of budgetsMiB) {
        const extra = { source: { maxBufferedBytes: budget * MIB } };
        const job = { partitions: 10, concurrency: 8, limit, formats: [format], extra };
        const result = await runExport(sim, job, { expectRows: events });
        const overBudget = result.peakRssMB - budget;
        (figures[format] ??= {})[budget] = { peakRssMB: result.peakRssMB, overBudgetMB: overBudget };
        rows.push([format, String(budget), fmt.n(result.wallS, 1), fmt.int(result.peakRssMB), fmt.int(overBudget)]);
      }
    }
    const spread = (format) => {
      const over = Object.values(figures[format]).map((f) => f.overBudgetMB);
      return `${fmt.int(Math.min(...over))}..${fmt.int(Math.max(...over))} MB`;
    };
    const markdown = [
      `${fmt.int(events)} events of about ${fmt.int(metadataBytes / 1000)} KB each (${fmt.int((events * metadataBytes) / 1e9)} GB ` +
      `of items), limit ${limit} (pages of about ${fmt.int((limit * metadataBytes) / 1e6)} MB), n = 10, concurrency 8.`,
      '',
      table(['Format', 'maxBufferedBytes MiB', 'Wall s', 'Peak RSS MB', 'Peak RSS minus budget MB'], rows),
      '',
      `Peak RSS minus the budget: NDJSON ${spread('ndjson')}, Parquet ${spread('parquet')} over budgets of ` +
      `${budgetsMiB.join(', ')} MiB.`,
    ].join('\n');
    return { markdown, figures };
  });
}
