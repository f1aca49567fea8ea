import { createReadStream } from 'node:fs';
import { mkdir, readdir, readFile, rmdir, stat, unlink } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { CheckpointError, ConfigError, OutputError } from '../errors.js';
import type { Logger } from '../log.js';
import { outputError, writeFileAtomic } from '../util/durable-file.js';
import { ifFound } from '../util/if-found.js';
import { realFolder } from '../util/real-folder.js';
import { assertWritable } from './folder-access.js';
import { acquireLock, inspectLock } from './folder-lock.js';
import type { LockOptions, OutputStore } from './store.js';

/**
 * An output folder. Shard files are written in place by their writers (temp file, fsync, rename),
 * so publishing them is a no-op; small files are replaced atomically (writeFileAtomic); the lock
 * is a file created exclusively, with a heartbeat (folder-lock.ts).
 *
 * A key may lead outside the folder with '..' (a checkpoint kept elsewhere, `checkpoint:` in the
 * job file): it is a path relative to the folder like any other.
 *
 * Nothing is written or deleted through a symbolic link inside the folder: every folder a write,
 * a listing or a delete goes through is checked to be a real folder first (realFolder), and a
 * link found there refuses the operation with LinkInOutputError. The folder itself may be a link.
 */
export function createLocalStore(dir: string, logger: Logger): OutputStore {
  const root = resolve(dir);
  const path = (key: string) => join(root, ...key.split('/'));
  const keyOf = (file: string) => relative(root, file).split(sep).join('/');
  /** Set when `prepare` made the folder: a run that then writes nothing (refused) leaves none behind. */
  let created = false;

  return {
    location: root,

    localPath: path,

    where: path,

    publishFile: () => Promise.resolve(),

    async putText(key, text) {
      await realFolder(root, parentKey(key), true);
      await writeFileAtomic(path(key), text);
    },

    async getText(key) {
      try {
        return await readFile(path(key), 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw new CheckpointError(`Cannot read ${path(key)} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`, {
          cause: error,
        });
      }
    },

    async size(key) {
      const info = await ifFound(stat(path(key)), path(key));
      return info?.isFile() === true ? info.size : undefined;
    },

    async list(prefix) {
      // The folder the prefix is in; its keys are then kept when they start with the prefix.
      const folder = parentKey(prefix);
      if (!(await realFolder(root, folder, false))) return [];
      const found = await walk(folder === '' ? root : path(folder), keyOf);
      return found.keys.filter((key) => key.startsWith(prefix)).sort();
    },

    async remove(keys) {
      const checked = new Set<string>();
      for (const key of keys) {
        const folder = parentKey(key);
        if (!checked.has(folder) && !(await realFolder(root, folder, false))) continue;
        checked.add(folder);
        await removeOrFail(path(key));
      }
    },

    async removeTree(folder, owned) {
      if (!(await realFolder(root, folder, false))) return [];
      const found = await walk(path(folder), keyOf);
      const mine = found.keys.filter(owned);
      for (const key of mine) await removeOrFail(path(key));
      // Folders left empty go too, deepest first; a folder holding anything else stays.
      for (const dir of [...found.folders].reverse()) await rmdir(dir).catch(() => undefined);
      return found.keys.filter((key) => !owned(key)).sort();
    },

    read(key) {
      return new Promise((resolveStream, reject) => {
        const stream = createReadStream(path(key));
        stream.once('open', () => resolveStream(stream));
        stream.once('error', (error) => reject(outputError('Reading', path(key), error)));
      });
    },

    async localCopy(key) {
      const file = path(key);
      const info = (await realFolder(root, parentKey(key), false)) ? await ifFound(stat(file), file) : undefined;
      if (info?.isFile() !== true) throw new OutputError(`${file} does not exist.`);
      return { path: file, release: () => Promise.resolve() };
    },

    async lock(key, what, options?: LockOptions) {
      await realFolder(root, parentKey(key), true);
      return acquireLock(path(key), what, logger, options);
    },

    lockState: (key) => inspectLock(path(key)),

    async checkWritable(dirs, files) {
      // A link on the way to any of them is refused first: nothing is written through it.
      for (const dir of new Set([...dirs, ...files.map(parentKey)])) await realFolder(root, dir, false);
      await assertWritable(dirs.map(path), files.map(path));
    },

    async prepare() {
      try {
        created = (await mkdir(root, { recursive: true })) !== undefined;
      } catch (error) {
        throw new ConfigError(`output.dir: cannot create ${root} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`, {
          cause: error,
        });
      }
    },

    async close() {
      if (created) await rmdir(root).catch(() => undefined);
    },
  };
}

/** The folder of a key ('' for the root). */
function parentKey(key: string): string {
  return key.slice(0, Math.max(0, key.lastIndexOf('/')));
}

/**
 * The files under `folder` as keys, and its folders (itself first, parents before children). A
 * symbolic link is listed as a file, never followed.
 */
async function walk(folder: string, keyOf: (file: string) => string): Promise<{ keys: string[]; folders: string[] }> {
  const found = { keys: [] as string[], folders: [] as string[] };
  const visit = async (at: string): Promise<void> => {
    const entries = await ifFound(readdir(at, { withFileTypes: true }), at);
    if (entries === undefined) return;
    found.folders.push(at);
    for (const entry of entries) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) await visit(path);
      else found.keys.push(keyOf(path));
    }
  };
  await visit(folder);
  return found;
}

/** Deletes one file (a link itself, never its target); a missing one is fine. */
async function removeOrFail(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') throw outputError('Removing', path, error);
  }
}
