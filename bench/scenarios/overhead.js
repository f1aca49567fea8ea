// Scenario 1, overhead vs a raw drain: 1M events, n = 10, the simulator adding about 20 ms to every
// page. The baseline (bench/peers/raw-drain.js) fetches the same partitions with the same
// concurrency and discards the pages. Target: Parquet export >= 0.9x the baseline's rows/s,
// NDJSON >= 0.95x. The simulator's CPU during each run is shown, to tell a CPU-bound server.
import { fmt, runExport, runRawDrain, table, withSimulator } from '../lib/harness.js';

export const title = 'Overhead vs a raw drain (scenario 1)';

export async function run({ events = 1_000_000, partitions = 10, latencyMs = 20 } = {}) {
  return withSimulator({ events, faults: { latencyMs } }, async (sim) => {
    const concurrency = partitions;
    const runs = {
      raw: await runRawDrain(sim, { partitions, concurrency, expectRows: events }),
      ndjson: await runExport(sim, { partitions, concurrency, formats: ['ndjson'] }, { expectRows: events }),
      parquet: await runExport(sim, { partitions, concurrency, formats: ['parquet'] }, { expectRows: events }),
    };
    const rate = (name) => events / runs[name].wallS;
    const rows = Object.entries(runs).map(([name, r]) => [
      name === 'raw' ? 'raw drain (baseline)' : `bulk-extract ${name}`,
      fmt.n(r.wallS),
      fmt.int(rate(name)),
      fmt.ratio(rate(name) / rate('raw')),
      fmt.n(r.cpuS),
      fmt.n(r.simCpuS),
      fmt.int(r.peakRssMB),
    ]);
    const markdown = [
      `${fmt.int(events)} events, n = ${partitions}, concurrency ${concurrency}, latency ${latencyMs} ms per page, gzip.`,
      '',
      table(['Program', 'Wall s', 'Rows/s', 'vs raw', 'Client CPU s', 'Simulator CPU s', 'Peak RSS MB'], rows),
      '',
      `Targets: Parquet >= 0.90x (got ${fmt.ratio(rate('parquet') / rate('raw'))}), ` +
      `NDJSON >= 0.95x (got ${fmt.ratio(rate('ndjson') / rate('raw'))}).`,
    ].join('\n');
    return {
      markdown,
      figures: {
        rowsPerS: { raw: rate('raw'), ndjson: rate('ndjson'), parquet: rate('parquet') },
        cpuS: { raw: runs.raw.cpuS, ndjson: runs.ndjson.cpuS, parquet: runs.parquet.cpuS },
        simCpuS: { raw: runs.raw.simCpuS, ndjson: runs.ndjson.simCpuS, parquet: runs.parquet.simCpuS },
      },
    };
  });
}
