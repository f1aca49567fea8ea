// Scenario 5, partitions pay off when the server is slow: 50 ms latency per page, an NDJSON export
// with n = 1, 2, 5, 10 (concurrency = n). Target: rows/s at n = 10 >= 8x n = 1.
import { fmt, runExport, table, withSimulator } from '../lib/harness.js';

export const title = 'Partitions pay off when the server is slow (scenario 5)';

export async function run({ events = 200_000, latencyMs = 50, counts = [1, 2, 5, 10] } = {}) {
  return withSimulator({ events, faults: { latencyMs } }, async (sim) => {
    const rates = {};
    for (const partitions of counts) {
      const result = await runExport(
        sim,
        { partitions, concurrency: partitions, formats: ['ndjson'] },
        { expectRows: events },
      );
      rates[partitions] = events / result.wallS;
    }
    const base = rates[counts[0]];
    const rows = counts.map((n) => [String(n), fmt.int(rates[n]), fmt.ratio(rates[n] / base)]);
    const top = counts.at(-1);
    const markdown = [
      `${fmt.int(events)} events, NDJSON, latency ${latencyMs} ms per page, concurrency = n.`,
      '',
      table(['n', 'Rows/s', 'vs n = 1'], rows),
      '',
      `Target: n = ${top} >= 8x n = 1 (got ${fmt.ratio(rates[top] / base)}).`,
    ].join('\n');
    return { markdown, figures: { rowsPerS: rates } };
  });
}
