import { createHash, randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { OutputStore } from '../../src/output/store.js';
import { tempDir } from './resume-harness.js';

/**
 * Helpers of the output store tests (s3-store, azure-store): files to upload, hashes to compare, and
 * the checks both stores pass alike.
 */

/** A local file of random bytes and its sha256. */
export function localFile(name: string, bytes: number): { path: string; sha256: string } {
  const data = randomBytes(bytes);
  const path = join(tempDir('store-local'), name);
  writeFileSync(path, data);
  return { path, sha256: createHash('sha256').update(data).digest('hex') };
}

/** The sha256 of everything a stream gives, read to its end. */
export async function sha256Of(stream: NodeJS.ReadableStream): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** What `run` throws, to look into; fails the test when it throws nothing. */
export function catchError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

/**
 * putText, getText and size round-trip on `store`, an absent key reads as undefined, an empty file
 * as ''. Returns the text left in _checkpoint.json, for the store's own look at the object.
 */
export async function expectSmallFilesRoundTrip(store: OutputStore): Promise<string> {
  expect(await store.getText('_checkpoint.json')).toBeUndefined();
  expect(await store.size('_checkpoint.json')).toBeUndefined();
  await store.putText('_checkpoint.json', '{"v":1}');
  const text = '{"v":2,"name":"Zürich ✓"}';
  await store.putText('_checkpoint.json', text);
  expect(await store.getText('_checkpoint.json')).toBe(text);
  expect(await store.size('_checkpoint.json')).toBe(Buffer.byteLength(text));
  await store.putText('_SUCCESS', '');
  expect(await store.getText('_SUCCESS')).toBe('');
  expect(await store.size('_SUCCESS')).toBe(0);
  return text;
}

/**
 * A shard staged by `store` (prepared) is published under its key and its staged file deleted; a
 * key never staged cannot be published. Returns the staged path.
 */
export async function expectStagedShardPublished(store: OutputStore): Promise<string> {
  const path = await store.stage('events/part=1-of-2/000000.ndjson');
  writeFileSync(path, '{"id":1}\n');
  await store.publish('events/part=1-of-2/000000.ndjson');
  expect(existsSync(path)).toBe(false);
  expect(await store.getText('events/part=1-of-2/000000.ndjson')).toBe('{"id":1}\n');
  await expect(store.publish('events/part=2-of-2/000000.ndjson')).rejects.toThrow('cannot read the local file');
  return path;
}

/**
 * createText on `store`: the first call creates the key (its folder too) and the text reads back
 * whole; a second call, and one on a key putText wrote, answer false and change nothing; of
 * `racers` calls at once on a fresh key exactly one answers true and its text is what is there.
 * Nothing else is left under the keys' folder (no temporary file).
 */
export async function expectCreatedOnce(store: OutputStore, racers = 8): Promise<void> {
  const key = '_delta_log/00000000000000000000.json';
  const first = '{"commitInfo":{"by":"first","name":"Zürich ✓"}}\n';
  expect(await store.createText(key, first)).toBe(true);
  expect(await store.getText(key)).toBe(first);
  expect(await store.createText(key, '{"commitInfo":{"by":"second"}}\n')).toBe(false);
  expect(await store.getText(key)).toBe(first);
  expect(await store.size(key)).toBe(Buffer.byteLength(first));

  await store.putText('_delta_log/_last_checkpoint', '{"version":0}');
  expect(await store.createText('_delta_log/_last_checkpoint', 'other')).toBe(false);
  expect(await store.getText('_delta_log/_last_checkpoint')).toBe('{"version":0}');

  const raced = '_delta_log/00000000000000000001.json';
  const texts = Array.from({ length: racers }, (_, i) => `{"commitInfo":{"by":${i}}}\n`.repeat(200));
  const answers = await Promise.all(texts.map((text) => store.createText(raced, text)));
  expect(answers.filter(Boolean)).toHaveLength(1);
  expect(await store.getText(raced)).toBe(texts[answers.indexOf(true)]);
  expect(await store.list('_delta_log/')).toEqual([key, raced, '_delta_log/_last_checkpoint']);
}
