// Scenario 5, partitions pay off when the server is slow: 50 ms latency per page, an NDJSON export
// with n = 1, 2, 5, 10 (concurrency = n). Target: rows/s at n = 10 >= 8x n = 1. Rows/s are the
// export's own (rows over the manifest's run duration), so the process start-up, the same for every
// n, does not shrink the short runs' figures. Run at two page sizes: with limit 1000, n = 10 asks
// for 10 pages of 1000 every ~60 ms, more than two shared cores can parse; with limit 100 (the
// platform's default) the server's latency stays the bound, which is the case partitions are for.
import { fmt, runExport, table, withSimulator } from '../lib/harness.js';

export const title = 'Partitions pay off when the server is slow (scenario 5)';

export async function run({ events = 500_000, latencyMs = 50, counts = [1, 2, 5, 10], limits = [1000, 100] } = {}) {
  const rates = {};
  const sizes = {};
  for (const limit of limits) {
    // As many pages at either size: n = 1 at 100 rows a page would otherwise take minutes.
    sizes[limit] = Math.round((events * limit) / 1000);
    rates[limit] = await withSimulator({ events: sizes[limit], faults: { latencyMs } }, async (sim) => {
      const byN = {};
      for (const partitions of counts) {
        const result = await runExport(
          sim,
          { partitions, concurrency: partitions, limit, formats: ['ndjson'] },
          { expectRows: sizes[limit] },
        );
        byN[partitions] = sizes[limit] / (result.manifest.durationMs / 1000);
      }
      return byN;
    });
  }
  const top = counts.at(-1);
  const speedup = (limit, n) => rates[limit][n] / rates[limit][counts[0]];
  const rows = counts.map((n) => [
    String(n),
    ...limits.flatMap((limit) => [fmt.int(rates[limit][n]), fmt.ratio(speedup(limit, n))]),
  ]);
  const markdown = [
    `NDJSON, latency ${latencyMs} ms per page, concurrency = n; ` +
    limits.map((limit) => `${fmt.int(sizes[limit])} events at limit ${limit}`).join(', ') + '.',
    '',
    table(['n', ...limits.flatMap((limit) => [`Rows/s (limit ${limit})`, 'vs n = 1'])], rows),
    '',
    `Target: n = ${top} >= 8x n = 1 (got ` +
    limits.map((limit) => `${fmt.ratio(speedup(limit, top))} at limit ${limit}`).join(', ') + ').',
  ].join('\n');
  return { markdown, figures: { rowsPerS: rates } };
}
