// Scenario 2, CPU per row: the export's CPU seconds per million rows (user + sys of its process,
// from the OS) against the floor of JSON.parse on the same response bodies (saved by the raw drain,
// parsed by bench/peers/parse-floor.js; its warm pass). Target: NDJSON <= 2x the floor, Parquet <= 3x.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, lastJsonLine, ROOT, runExport, runRawDrain, table, timed, withSimulator } from '../lib/harness.js';

export const title = 'CPU per row (scenario 2)';

export async function run({ events = 1_000_000, partitions = 10 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-cpu-'));
  try {
    return await withSimulator({ events }, async (sim) => {
      const bodies = join(dir, 'bodies.bin');
      await runRawDrain(sim, { partitions, saveBodies: bodies, expectRows: events });
      const floor = lastJsonLine((await timed([join(ROOT, 'bench/peers/parse-floor.js'), bodies])).stdout);
      if (floor.rows !== events) throw new Error(`the parse floor saw ${floor.rows} rows, expected ${events}`);
      rmSync(bodies);
      const perM = { floor: floor.warmCpuSPerMillionRows };
      for (const format of ['ndjson', 'parquet']) {
        const result = await runExport(sim, { partitions, formats: [format] }, { expectRows: events });
        perM[format] = (result.cpuS / events) * 1e6;
      }
      const rows = Object.entries(perM).map(([name, cpu]) => [
        name === 'floor' ? 'JSON.parse floor (warm pass)' : `bulk-extract ${name}`,
        fmt.n(cpu),
        fmt.ratio(cpu / perM.floor),
      ]);
      const markdown = [
        `${fmt.int(events)} events, n = ${partitions}, no added latency, gzip on the wire.`,
        '',
        table(['Work', 'CPU s per 1M rows', 'vs floor'], rows),
        '',
        `Targets: NDJSON <= 2x (got ${fmt.ratio(perM.ndjson / perM.floor)}), ` +
        `Parquet <= 3x (got ${fmt.ratio(perM.parquet / perM.floor)}).`,
      ].join('\n');
      return { markdown, figures: { cpuSPerMillionRows: perM } };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
