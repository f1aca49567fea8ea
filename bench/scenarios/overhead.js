// Overhead vs a raw drain: 1M events, n = 10, the simulator adding a realistic 150 ms to every
// page. The baseline (bench/peers/raw-drain.js) fetches the same partitions with the same
// concurrency and discards the pages. Target (issue 16): both formats >= 0.97x the baseline's
// rows/s. The simulator's CPU during each run is shown, to tell a CPU-bound server.
import { fmt, runExport, runRawDrain, table, withSimulator } from '../lib/harness.js';

export const title = 'Overhead vs a raw drain at 150 ms per page (issues 6 and 16)';

export async function run({ events = 1_000_000, partitions = 10, latencyMs = 150 } = {}) {
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
      `Targets: Parquet >= 0.97x (got ${fmt.ratio(rate('parquet') / rate('raw'))}), ` +
      `NDJSON >= 0.97x (got ${fmt.ratio(rate('ndjson') / rate('raw'))}).`,
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
