import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { OutputStore } from '../../src/output/store.js';

/** Copies every object of the store into `dir`, laid out as an output folder; returns `dir`. */
export async function downloadAll(store: OutputStore, dir: string): Promise<string> {
  for (const key of await store.list('')) {
    const path = join(dir, ...key.split('/'));
    await mkdir(dirname(path), { recursive: true });
    await pipeline(await store.read(key), createWriteStream(path));
  }
  return dir;
}
