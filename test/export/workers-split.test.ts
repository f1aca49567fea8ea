import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { newCheckpoint } from '../../src/export/state/checkpoint.js';
import { planStreams } from '../../src/export/plan/streams.js';
import { newAgreement, pairsOf, pairsOfWorker } from '../../src/export/workers/agreement.js';
import { workerCheckpoint } from '../../src/export/workers/worker-files.js';
import { parseWorker, resolveWorker } from '../../src/export/workers/worker-spec.js';
import { UsageError } from '../../src/errors.js';

function agreementOf(partitions: number[], count: number) {
  const streams = planStreams(
    partitions.map((n, i) => ({
      resource: 'events' as const,
      name: `s${i}`,
      partitions: n,
      limit: 1000,
      filter: {},
      mode: 'full' as const,
      safetyLag: 300_000,
    })),
    ['parquet'],
  );
  const checkpoint = newCheckpoint('http://127.0.0.1:1', streams, '2026-11-21T00:00:00.000Z');
  return newAgreement(count, streams.map((s) => s.name), checkpoint, '2026-11-21T00:00:00.000Z');
}

const partitionsOfStreams = fc.array(fc.integer({ min: 1, max: 10 }), { minLength: 1, maxLength: 5 });

describe('the split of (stream, partition) pairs among workers', () => {
  it('every pair belongs to exactly one worker, and the workers\' shares differ in size by at most one', () => {
    fc.assert(
      fc.property(partitionsOfStreams, fc.integer({ min: 1, max: 40 }), (partitions, k) => {
        const agreement = agreementOf(partitions, k);
        const all = pairsOf(agreement).map((p) => `${p.stream}/${p.m}`);
        const shares = Array.from({ length: k }, (_, i) => [...pairsOfWorker(agreement, i)]);
        expect(shares.flat().sort()).toEqual([...all].sort());
        const sizes = shares.map((s) => s.length);
        expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
      }),
    );
  });

  it('is round-robin in config order: pair j goes to worker j mod k', () => {
    const agreement = agreementOf([3, 2], 2);
    expect([...pairsOfWorker(agreement, 0)]).toEqual(['s0/1', 's0/3', 's1/2']);
    expect([...pairsOfWorker(agreement, 1)]).toEqual(['s0/2', 's1/1']);
  });

  it('a worker\'s checkpoint holds its own partitions only, at the agreement\'s progress', () => {
    const agreement = agreementOf([3, 2], 2);
    const own = workerCheckpoint(agreement, 1);
    expect(Object.keys(own.streams.s0?.parts ?? {})).toEqual(['2']);
    expect(Object.keys(own.streams.s1?.parts ?? {})).toEqual(['1']);
    expect(own.streams.s0?.window).toEqual(agreement.checkpoint.streams.s0?.window);
  });
});

describe('--shard I/K and --shards K', () => {
  it('parses I/K with I from 0 to K-1', () => {
    expect(parseWorker('0/1')).toEqual({ index: 0, count: 1 });
    expect(parseWorker('3/4')).toEqual({ index: 3, count: 4 });
    for (const bad of ['4/4', '1', '-1/2', '1/0', 'a/b', '1/2/3', '0/1001']) expect(() => parseWorker(bad)).toThrow(UsageError);
  });

  it('--shards K takes the index from JOB_COMPLETION_INDEX; the explicit form must agree with it', () => {
    expect(resolveWorker({ shards: '4' }, { JOB_COMPLETION_INDEX: '2' })).toEqual({ index: 2, count: 4 });
    expect(resolveWorker({ shard: '2/4' }, { JOB_COMPLETION_INDEX: '2' })).toEqual({ index: 2, count: 4 });
    expect(resolveWorker({}, { JOB_COMPLETION_INDEX: '2' })).toBeUndefined();
    expect(() => resolveWorker({ shards: '4' }, {})).toThrow(/JOB_COMPLETION_INDEX/);
    expect(() => resolveWorker({ shards: '4' }, { JOB_COMPLETION_INDEX: '4' })).toThrow(UsageError);
    expect(() => resolveWorker({ shard: '1/4' }, { JOB_COMPLETION_INDEX: '2' })).toThrow(/JOB_COMPLETION_INDEX is 2/);
    expect(() => resolveWorker({ shard: '1/4', shards: '4' }, {})).toThrow(/give one/);
  });
});
