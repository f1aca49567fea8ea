// Scenario 3, the official SDK as a peer: @cognite/sdk draining the same n partitions of the same
// simulator (no added latency) through its generic `get`, following cursors, writing NDJSON
// (bench/peers/sdk-drain.js). Target: bulk-extract's NDJSON export >= 1.5x the SDK's rows/s, its
// Parquet export >= 1x, both with no more peak memory.
import { fmt, runExport, runSdkDrain, table, withSimulator } from '../lib/harness.js';

export const title = 'The official SDK as a peer (scenario 3)';

export async function run({ events = 1_000_000, partitions = 10 } = {}) {
  return withSimulator({ events }, async (sim) => {
    const runs = {
      sdk: await runSdkDrain(sim, { partitions, expectRows: events }),
      ndjson: await runExport(sim, { partitions, formats: ['ndjson'] }, { expectRows: events }),
      parquet: await runExport(sim, { partitions, formats: ['parquet'] }, { expectRows: events }),
    };
    const rate = (name) => events / runs[name].wallS;
    const rows = Object.entries(runs).map(([name, r]) => [
      name === 'sdk' ? '@cognite/sdk 10.5.0 to NDJSON' : `bulk-extract ${name}`,
      fmt.n(r.wallS),
      fmt.int(rate(name)),
      fmt.ratio(rate(name) / rate('sdk')),
      fmt.n(r.cpuS),
      fmt.int(r.peakRssMB),
      fmt.ratio(r.peakRssMB / runs.sdk.peakRssMB),
    ]);
    const markdown = [
      `${fmt.int(events)} events, n = ${partitions}, no added latency.`,
      '',
      table(['Program', 'Wall s', 'Rows/s', 'vs SDK', 'CPU s', 'Peak RSS MB', 'RSS vs SDK'], rows),
      '',
      `Targets: NDJSON >= 1.5x the SDK (got ${fmt.ratio(rate('ndjson') / rate('sdk'))}), ` +
      `Parquet >= 1x (got ${fmt.ratio(rate('parquet') / rate('sdk'))}), both with no more peak RSS.`,
    ].join('\n');
    const rss = Object.fromEntries(Object.entries(runs).map(([name, r]) => [name, r.peakRssMB]));
    return {
      markdown,
      figures: { rowsPerS: { sdk: rate('sdk'), ndjson: rate('ndjson'), parquet: rate('parquet') }, peakRssMB: rss },
    };
  });
}
