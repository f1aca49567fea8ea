import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Format } from '../../src/config/job-schema.js';
import { shardExtension, shardFileName, shardSeq } from '../../src/sink/shard-files.js';

describe('shard file names', () => {
  it.each<[Format, boolean, number, string]>([
    ['parquet', false, 0, '000000.parquet'],
    ['parquet', true, 42, '000042.parquet'],
    ['ndjson', false, 7, '000007.ndjson'],
    ['ndjson', true, 123_456, '123456.ndjson.gz'],
    ['ndjson', false, 1_234_567, '1234567.ndjson'],
  ])('%s (gzip %s), shard %i: %s', (format, gzip, seq, name) => {
    expect(shardFileName(seq, shardExtension(format, gzip))).toBe(name);
  });

  it('shardSeq reads back the sequence number of every name it gave, in any format', () => {
    const formats = fc.constantFrom<[Format, boolean]>(['parquet', false], ['ndjson', false], ['ndjson', true]);
    fc.assert(
      fc.property(fc.nat({ max: 99_999_999 }), formats, (seq, [format, gzip]) => {
        expect(shardSeq(shardFileName(seq, shardExtension(format, gzip)))).toBe(seq);
      }),
    );
  });

  it.each([
    '42.parquet',
    '000042.parquet.spill.inprogress',
    '000042.ndjson.inprogress',
    '000042.csv',
    '_manifest.json',
    'part=1-of-2',
  ])('%s is not a shard file', (name) => {
    expect(shardSeq(name)).toBeUndefined();
  });
});
