import { readdirSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Format, outputSchema, type OutputConfig } from '../../src/config/job-schema.js';
import { createShardSink, type OpenShard, type ShardSink, type ShardSinkOptions } from '../../src/sink/index.js';
import { defaultEncoderThreads } from '../../src/sink/parquet/encoder-pool.js';
import type { ShardWriter } from '../../src/sink/shard-writer.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';
import { captureLogger } from '../support/log-capture.js';

const sinks: ShardSink[] = [];

afterEach(async () => {
  await Promise.all(sinks.splice(0).map((sink) => sink.close()));
  removeTempDirs();
});

/** A sink of its own (closed after the test) staging its shards in place under a new temp folder. */
function newSink(output: Partial<OutputConfig> = {}, options: ShardSinkOptions = {}): { sink: ShardSink; out: string } {
  const out = tempDir('bulk-extract-sink-');
  const stage = async (key: string) => {
    const path = join(out, ...key.split('/'));
    await mkdir(dirname(path), { recursive: true });
    return path;
  };
  const sink = createShardSink(stage, outputSchema.parse({ dir: out, ...output }), options);
  sinks.push(sink);
  return { sink, out };
}

function events(count: number, from = 0): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, k) => ({
    id: 1_000_000 + from + k,
    externalId: `EV-${from + k}`,
    type: 'alarm',
    startTime: Date.UTC(2024, 0, 1) + k,
    metadata: { site: `site ${k % 5}` },
    lastUpdatedTime: Date.UTC(2024, 0, 2),
  }));
}

/** Opens shard `seq` of an events partition and appends `rows` events to it. */
async function openWith(sink: ShardSink, seq: number, rows: number, formats: Format[] = ['parquet']): Promise<OpenShard[]> {
  const writers = await sink.open({ dir: 'events/part=1-of-1', stream: { resource: 'events', formats } }, seq);
  for (const writer of writers) await writer.append(events(rows));
  return writers;
}

async function only(writers: Promise<ShardWriter[]>): Promise<ShardWriter> {
  const [writer, ...rest] = await writers;
  if (writer === undefined || rest.length > 0) throw new Error('expected one writer');
  return writer;
}

describe('createShardSink', () => {
  it('opens shard `seq` of a partition in every format, staged under its key in the partition folder, named <seq:06>.<ext>', async () => {
    const { sink, out } = newSink({ ndjson: { compression: 'gzip' } });
    const writers = await openWith(sink, 7, 10, ['parquet', 'ndjson']);
    expect(writers.map((writer) => writer.key)).toEqual(['events/part=1-of-1/000007.parquet', 'events/part=1-of-1/000007.ndjson.gz']);
    const committed = await Promise.all(writers.map((writer) => writer.commit()));
    const dir = join(out, 'events/part=1-of-1');
    expect(committed.map((shard) => [shard.format, shard.path, shard.rows])).toEqual([
      ['parquet', join(dir, '000007.parquet'), 10],
      ['ndjson', join(dir, '000007.ndjson.gz'), 10],
    ]);
    expect(readdirSync(dir).sort()).toEqual(['000007.ndjson.gz', '000007.parquet']);
  });

  it('the bytes per row one sink learned do not change another sink\'s first guess, nor its own estimate', async () => {
    const a = newSink({ parquet: { compression: 'zstd', rowGroupRows: 1000 } }).sink;
    const b = newSink({ parquet: { compression: 'none', rowGroupRows: 1000 } }).sink;
    const doneA = await (await only(openWith(a, 0, 2000))).commit();
    const learnedA = Math.round((1000 * doneA.bytes) / doneA.rows);
    expect(learnedA, 'the test needs a size other than the first guess').not.toBe(100_000);

    // b has committed nothing: 100 bytes per row, the first guess, whatever a learned.
    const firstOfB = await only(openWith(b, 0, 1000));
    expect(firstOfB.bytes).toBe(100_000);
    // b learns from its own (uncompressed) shard; a's next shard is still sized by a's.
    const doneB = await firstOfB.commit();
    expect(Math.round((1000 * doneB.bytes) / doneB.rows)).not.toBe(learnedA);
    const nextOfA = await only(openWith(a, 1, 1000));
    expect(nextOfA.bytes).toBe(learnedA);
    await nextOfA.abort();
  });

  it('starts encoder threads on the first Parquet commit; close() ends its own, not another sink\'s', async () => {
    const a = newSink({}, { encoderThreads: 1 }).sink;
    const b = newSink({}, { encoderThreads: 2 }).sink;
    const open = await only(openWith(a, 0, 100));
    expect([a.encoderThreads, b.encoderThreads], 'opening and appending start no thread').toEqual([0, 0]);
    await open.commit();
    expect([a.encoderThreads, b.encoderThreads]).toEqual([1, 0]);

    const [b0, b1] = await Promise.all([only(openWith(b, 0, 100)), only(openWith(b, 1, 100))]);
    await Promise.all([b0.commit(), b1.commit()]);
    expect(b.encoderThreads).toBeGreaterThanOrEqual(1);
    expect(b.encoderThreads).toBeLessThanOrEqual(2);

    await a.close();
    expect(a.encoderThreads).toBe(0);
    await expect(a.open({ dir: 'x', stream: { resource: 'events', formats: ['parquet'] } }, 1)).rejects.toThrow(/closed/);
    // b still encodes with its own threads.
    expect((await (await only(openWith(b, 2, 100))).commit()).rows).toBe(100);
    await b.close();
    expect(b.encoderThreads).toBe(0);
  });

  it('logs once, at debug, how many encoder threads its CPUs allow and why; an NDJSON-only sink logs nothing', async () => {
    const parquet = captureLogger();
    const { sink } = newSink({}, { logger: parquet.logger });
    for (const seq of [0, 1]) await (await only(openWith(sink, seq, 10))).commit();
    const lines = parquet.records().filter((record) => String(record.msg).startsWith('Parquet encoder threads'));
    expect(lines).toEqual([
      expect.objectContaining({
        level: 20,
        encoderThreads: defaultEncoderThreads(),
        msg: expect.stringMatching(/^Parquet encoder threads: at most \d, for \d+ CPUs: /),
      }),
    ]);

    const ndjson = captureLogger();
    const other = newSink({}, { logger: ndjson.logger }).sink;
    await (await only(openWith(other, 0, 10, ['ndjson']))).commit();
    expect(ndjson.records()).toEqual([]);
  });
});
