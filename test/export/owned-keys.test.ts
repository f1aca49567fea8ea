import { describe, expect, it } from 'vitest';
import { isOwnedKey } from '../../src/export/state/index.js';

/** Cleanups delete only keys bulk-extract writes: its shards, their temporary, spill and runs files. */
describe('isOwnedKey', () => {
  it.each([
    'events/part=1-of-2/000001.parquet',
    'events/part=1-of-2/000001.parquet.inprogress',
    'events/part=1-of-2/000001.parquet.spill.inprogress',
    'points/part=3-of-10/000012.parquet.runs.inprogress',
    'points/run=20261127T010203.456Z/part=1-of-1/000000.ndjson.gz',
  ])('%s is the program\'s', (key) => {
    expect(isOwnedKey(key)).toBe(true);
  });

  it.each([
    'points/part=3-of-10/000012.runs.inprogress',
    'points/part=3-of-10/notes.txt',
    'points/part=3-of-10/000012.parquet.other.inprogress',
  ])('%s is not', (key) => {
    expect(isOwnedKey(key)).toBe(false);
  });
});
