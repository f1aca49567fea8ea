// Scenario 4, memory is flat: peak RSS of a Parquet export of 1M and of 10M events (n = 10, no
// added latency). Target: at most 250 MB each, and the 10M figure within 20% of the 1M figure.
import { fmt, runExport, table, withSimulator } from '../lib/harness.js';

export const title = 'Memory is flat (scenario 4)';

export async function run({ events, sizes } = {}) {
  sizes ??= events === undefined ? [1_000_000, 10_000_000] : [events, events * 10];
  const peak = {};
  const rows = [];
  for (const size of sizes) {
    const result = await withSimulator({ events: size }, (sim) =>
      runExport(sim, { partitions: 10, formats: ['parquet'] }, { expectRows: size }),
    );
    peak[size] = result.peakRssMB;
    rows.push([fmt.int(size), fmt.n(result.wallS, 1), fmt.int(size / result.wallS), fmt.int(result.peakRssMB)]);
  }
  const ratio = peak[sizes[1]] / peak[sizes[0]];
  const markdown = [
    'Parquet only, n = 10, no added latency.',
    '',
    table(['Events', 'Wall s', 'Rows/s', 'Peak RSS MB'], rows),
    '',
    `Target: at most 250 MB (got ${fmt.int(Math.max(...Object.values(peak)))}), the larger within 1.20x of ` +
    `the smaller (got ${fmt.ratio(ratio)}).`,
  ].join('\n');
  return { markdown, figures: { peakRssMB: peak, ratio } };
}
