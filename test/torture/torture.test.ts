import { describe, expect, it } from 'vitest';
import { torture } from '../support/torture.js';

/**
 * Crash torture, bounded: about 20 SIGKILLs per `npm test`, shared among three scenarios. The long run is
 * `npm run torture -- --kills 200 [--seed S]` (TORTURE_KILLS / TORTURE_SEED); its figures are in bench/RESULTS.md.
 */
const KILLS = Number(process.env.TORTURE_KILLS ?? 20);
const SEED = Number(process.env.TORTURE_SEED ?? 20261121);
const FAULTS = { rate429: 0.1, rate5xx: 0.05, resetRate: 0.02, truncateRate: 0.02, shortPageRate: 0.2 };

describe('crash torture: SIGKILL at seeded moments, resume, repeat; the output equals the source row for row', () => {
  const killsA = Math.ceil(KILLS / 3);
  const killsB = Math.ceil((KILLS - killsA) / 2);
  const killsSix = KILLS - killsA - killsB;

  it(`events in 3 partitions and assets in 1, Parquet + NDJSON, faults on (${killsA} kills)`, async () => {
    const report = await torture({
      kills: killsA,
      seed: SEED,
      sizes: { events: 12_000, assets: 800 },
      streams: [
        { resource: 'events', partitions: 3, limit: 500 },
        { resource: 'assets', partitions: 1, limit: 200 },
      ],
      formats: ['parquet', 'ndjson'],
      faults: FAULTS,
    });
    console.info(`torture A: ${JSON.stringify(report)}`);
    expect(report.kills).toBe(killsA);
    expect(report.rounds).toBeGreaterThanOrEqual(1);
  });

  it(`events in 10 partitions, Parquet + gzip NDJSON, faults on (${killsB} kills)`, async () => {
    const report = await torture({
      kills: killsB,
      seed: SEED + 1,
      sizes: { events: 15_000, assets: 100 },
      streams: [{ resource: 'events', partitions: 10, limit: 300 }],
      formats: ['parquet', 'ndjson'],
      ndjsonGzip: true,
      faults: FAULTS,
    });
    console.info(`torture B: ${JSON.stringify(report)}`);
    expect(report.kills).toBe(killsB);
    expect(report.rounds).toBeGreaterThanOrEqual(1);
  });

  it(`all six collections at once, Parquet + NDJSON, faults on (${killsSix} kills)`, async () => {
    const report = await torture({
      kills: killsSix,
      seed: SEED + 2,
      sizes: { assets: 600, events: 3000, timeseries: 2000, files: 2000, sequences: 800, relationships: 3000 },
      streams: [
        { resource: 'assets', partitions: 1, limit: 200 },
        { resource: 'events', partitions: 3, limit: 500 },
        { resource: 'timeseries', partitions: 2, limit: 300 },
        { resource: 'files', partitions: 2, limit: 300 },
        { resource: 'sequences', partitions: 2, limit: 100 },
        { resource: 'relationships', partitions: 3, limit: 400 },
      ],
      formats: ['parquet', 'ndjson'],
      faults: FAULTS,
    });
    console.info(`torture C (six collections): ${JSON.stringify(report)}`);
    expect(report.kills).toBe(killsSix);
    expect(report.rounds).toBeGreaterThanOrEqual(1);
  });
});
