import { rm } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import pLimit from 'p-limit';
import type { OutputStore } from '../output/store.js';
import { outputError, writeFileAtomic } from '../util/durable-file.js';

/**
 * An export to object storage runs on a local staging folder, exactly as an export to a folder
 * does, and mirrors each step of a commit to the store right after it, in the same order: a shard
 * is uploaded (and its local copy deleted) before the manifest that lists it is put, and that
 * before the checkpoint that counts it. So the store passes through the same states as a local
 * output folder would, and the exactness rules carry over. Paths are those of the staging folder;
 * keys are the same paths relative to it.
 */
export class Mirror {
  /**
   * Uploads at once, over all partitions: each buffers its parts in flight in memory (lib-storage:
   * 4 parts of output.s3.partSizeMiB), so this bounds that memory (2 x 4 x 8 MiB by default).
   */
  private readonly uploads = pLimit(2);

  constructor(
    private readonly outDir: string,
    readonly store: OutputStore,
  ) {}

  key(path: string): string {
    return relative(this.outDir, path).split(sep).join('/');
  }

  /** A shard renamed into place in the staging folder: uploaded, then deleted locally. */
  publish(path: string): Promise<void> {
    return this.uploads(() => this.store.publishFile(path, this.key(path)));
  }

  text(path: string, text: string): Promise<void> {
    return this.store.putText(this.key(path), text);
  }

  size(path: string): Promise<number | undefined> {
    return this.store.size(this.key(path));
  }

  async remove(paths: readonly string[]): Promise<void> {
    await this.store.remove(paths.map((path) => this.key(path)));
  }

  /** Everything under a folder of the output. */
  async removeTree(dir: string): Promise<void> {
    await this.store.remove(await this.store.list(`${this.key(dir)}/`));
  }

  /** Names of the objects directly or deeper under a folder, relative to it. */
  async list(dir: string): Promise<string[]> {
    const prefix = `${this.key(dir)}/`;
    return (await this.store.list(prefix)).map((key) => key.slice(prefix.length));
  }
}

/** Writes a small file of the output atomically, then its copy in the store (if any). */
export async function writeOutputText(path: string, text: string, mirror: Mirror | undefined): Promise<void> {
  await writeFileAtomic(path, text);
  await mirror?.text(path, text);
}

/** Deletes a file or folder of the output (missing is fine), then its copy in the store (if any). */
export async function removeOutput(path: string, mirror: Mirror | undefined, tree = false): Promise<void> {
  try {
    await rm(path, { recursive: tree, force: true });
  } catch (error) {
    throw outputError('Removing', path, error);
  }
  if (tree) await mirror?.removeTree(path);
  else await mirror?.remove([path]);
}
