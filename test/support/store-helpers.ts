import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './resume-harness.js';

/** Helpers of the output store tests (s3-store, azure-store): files to upload, hashes to compare. */

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
