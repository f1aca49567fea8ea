// Memory is flat: peak RSS of NDJSON and Parquet exports of 1M and of 10M events (n = 10, no added
// latency). Targets (issue 16): at most 160 MB (NDJSON) and 220 MB (Parquet) at 1M, and the 10M
// figure within 1.1x of the 1M figure.
import { fmt, runExport, table, withSimulator } from '../lib/harness.js';

export const title = 'Memory is flat (issues 6 and 16)';

const LIMITS = { ndjson: 160, parquet: 220 };

export async function run({ events, sizes, formats = ['ndjson', 'parquet'] } = {}) {
  sizes ??= events === undefined ? [1_000_000, 10_000_000] : [events, events * 10];
  const peak = {};
  const rows = [];
  for (const size of sizes) {
    await withSimulator({ events: size }, async (sim) => {
      for (const format of formats) {
        const result = await runExport(sim, { partitions: 10, formats: [format] }, { expectRows: size });
        (peak[format] ??= {})[size] = result.peakRssMB;
        const cpuPerM = (result.cpuS / size) * 1e6;
        rows.push([format, fmt.int(size), fmt.n(result.wallS, 1), fmt.n(cpuPerM), fmt.int(result.peakRssMB)]);
      }
    });
  }
  const [small, large] = sizes;
  const ratio = Object.fromEntries(formats.map((format) => [format, peak[format][large] / peak[format][small]]));
  const targets = formats.map(
    (format) =>
      `${format} at most ${LIMITS[format]} MB at ${fmt.int(small)} (got ${fmt.int(peak[format][small])}), ` +
      `${fmt.int(large)} within 1.10x of it (got ${fmt.ratio(ratio[format])})`,
  );
  const markdown = [
    'n = 10, concurrency 8 (the default), no added latency.',
    '',
    table(['Format', 'Events', 'Wall s', 'CPU s per 1M rows', 'Peak RSS MB'], rows),
    '',
    `Targets: ${targets.join('; ')}.`,
  ].join('\n');
  return { markdown, figures: { peakRssMB: peak, ratio } };
}
