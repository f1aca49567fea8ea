// The official SDK as a peer (issues 6 and 16): @cognite/sdk draining the same n partitions of the
// same simulator into NDJSON (bench/peers/sdk-drain.js), with its generic `get` (the peer the ratios
// are taken against, the lighter one) and with its typed `events.list`, against bulk-extract's
// NDJSON and Parquet exports; 1M events, n = 10, concurrency 10, OAuth, no added latency. Then both formats again
// with n = 1, for memory against n. CPU seconds per million rows and peak RSS first (the program's
// own, on its own core when pinned), wall second.
import { fmt, runExport, runSdkDrain, table, withSimulator } from '../lib/harness.js';

const PEERS = {
  'sdk': '@cognite/sdk 10.5 generic `get` loop to NDJSON',
  'sdk-list': '@cognite/sdk 10.5 `events.list` + `next()` to NDJSON',
};

export const title = 'The official SDK as a peer: CPU, memory and wall (issues 6 and 16)';

export async function run({ events = 1_000_000, partitions = 10 } = {}) {
  return withSimulator({ events }, async (sim) => {
    const exportOf = (format, n) =>
      runExport(sim, { partitions: n, concurrency: 10, formats: [format] }, { expectRows: events });
    const runs = {
      'sdk': await runSdkDrain(sim, { partitions, expectRows: events }),
      'sdk-list': await runSdkDrain(sim, { partitions, mode: 'list', expectRows: events }),
      'ndjson': await exportOf('ndjson', partitions),
      'parquet': await exportOf('parquet', partitions),
      'ndjson, n = 1': await exportOf('ndjson', 1),
      'parquet, n = 1': await exportOf('parquet', 1),
    };
    const sdk = runs.sdk;
    const cpuPerM = (r) => (r.cpuS / events) * 1e6;
    const rows = Object.entries(runs).map(([name, r]) => [
      PEERS[name] ?? `bulk-extract ${name}`,
      fmt.n(cpuPerM(r)),
      fmt.ratio(cpuPerM(r) / cpuPerM(sdk)),
      fmt.int(r.peakRssMB),
      fmt.ratio(r.peakRssMB / sdk.peakRssMB),
      fmt.n(r.wallS),
      fmt.ratio(sdk.wallS / r.wallS),
      fmt.n(r.simCpuS),
    ]);
    const rss = (name) => runs[name].peakRssMB;
    const figures = {
      cpuSPerMillionRows: Object.fromEntries(Object.entries(runs).map(([name, r]) => [name, cpuPerM(r)])),
      peakRssMB: Object.fromEntries(Object.entries(runs).map(([name, r]) => [name, r.peakRssMB])),
      wallS: Object.fromEntries(Object.entries(runs).map(([name, r]) => [name, r.wallS])),
    };
    const check = (format, cpuMax, rssMax, rssVsSdkMax, speedMin) => {
      const r = runs[format];
      return (
        `${format}: CPU vs SDK ${fmt.ratio(cpuPerM(r) / cpuPerM(sdk))} (target <= ${cpuMax}x), ` +
        `peak RSS ${fmt.int(r.peakRssMB)} MB (<= ${rssMax}), vs SDK ${fmt.ratio(r.peakRssMB / sdk.peakRssMB)} ` +
        `(<= ${rssVsSdkMax}x), n = 10 vs n = 1 ${fmt.ratio(r.peakRssMB / rss(`${format}, n = 1`))} (<= 1.3x), ` +
        `speed vs SDK ${fmt.ratio(sdk.wallS / r.wallS)} (>= ${speedMin}x)`
      );
    };
    const markdown = [
      `${fmt.int(events)} events, n = ${partitions} unless said, concurrency 10, OAuth, no added latency.`,
      '',
      table(
        ['Program', 'CPU s per 1M rows', 'CPU vs SDK', 'Peak RSS MB', 'RSS vs SDK', 'Wall s', 'Speed vs SDK', 'Simulator CPU s'],
        rows,
      ),
      '',
      `Targets (issue 16): ${check('ndjson', 0.5, 160, 0.65, 2)}; ${check('parquet', 0.75, 220, 0.9, 1.5)}.`,
    ].join('\n');
    return { markdown, figures };
  });
}
