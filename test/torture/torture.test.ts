import { describe, expect, it } from 'vitest';
import { torture } from '../support/torture.js';

/**
 * Crash torture, bounded: about 20 SIGKILLs per `npm test`. The long run is
 * `npm run torture -- --kills 200 [--seed S]` (TORTURE_KILLS / TORTURE_SEED); its figures are in CONTRIBUTING.md.
 */
const KILLS = Number(process.env.TORTURE_KILLS ?? 20);
const SEED = Number(process.env.TORTURE_SEED ?? 20261121);
const FAULTS = { rate429: 0.1, rate5xx: 0.05, resetRate: 0.02, truncateRate: 0.02, shortPageRate: 0.2 };

describe('crash torture: SIGKILL at seeded moments, resume, repeat; the output equals the source row for row', () => {
  it(`events in 3 partitions and assets in 1, Parquet + NDJSON, faults on (${Math.ceil(KILLS / 2)} kills)`, async () => {
    const report = await torture({
      kills: Math.ceil(KILLS / 2),
      seed: SEED,
      events: 12_000,
      assets: 800,
      streams: [
        { resource: 'events', partitions: 3, limit: 500 },
        { resource: 'assets', partitions: 1, limit: 200 },
      ],
      formats: ['parquet', 'ndjson'],
      faults: FAULTS,
    });
    console.info(`torture A: ${JSON.stringify(report)}`);
    expect(report.kills).toBe(Math.ceil(KILLS / 2));
    expect(report.rounds).toBeGreaterThanOrEqual(1);
  });

  it(`events in 10 partitions, Parquet + gzip NDJSON, faults on (${Math.floor(KILLS / 2)} kills)`, async () => {
    const report = await torture({
      kills: Math.floor(KILLS / 2),
      seed: SEED + 1,
      events: 15_000,
      assets: 100,
      streams: [{ resource: 'events', partitions: 10, limit: 300 }],
      formats: ['parquet', 'ndjson'],
      ndjsonGzip: true,
      faults: FAULTS,
    });
    console.info(`torture B: ${JSON.stringify(report)}`);
    expect(report.kills).toBe(Math.floor(KILLS / 2));
    expect(report.rounds).toBeGreaterThanOrEqual(1);
  });
});
