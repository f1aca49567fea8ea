import { createReadStream, type Dirent } from 'node:fs';
import { lstat, mkdir, readdir, readFile, readlink, rmdir, stat, unlink } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { CheckpointError, ConfigError, OutputError } from '../errors.js';
import { deniedCause } from '../util/write-denied.js';
import type { Logger } from '../log.js';
import { outputError, writeFileAtomic, writeFileIfAbsent } from '../util/durable-file.js';
import { ifFound } from '../util/if-found.js';
import { LinkInOutputError, realFolder } from '../util/real-folder.js';
import { assertCreatable, assertWritable } from './folder-access.js';
import { acquireLock, inspectLock } from './folder-lock.js';
import type { LocalCopy, OutputStore } from './store.js';

/**
 * An output folder. Shard files are staged in place and written there by their writers (temp
 * file, fsync, rename), so publishing them is a no-op; small files are replaced atomically (writeFileAtomic); the lock
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
  const at = folderAt(dir);
  const { root, path } = at;
  /** Set when `prepare` made the folder: a run that then writes nothing (refused) leaves none behind. */
  let created = false;
  return {
    location: root,
    where: path,
    async stage(key) {
      // Created one folder at a time, never through a link inside the output (realFolder).
      await realFolder(root, parentKey(key), true);
      return path(key);
    },
    publish: () => Promise.resolve(),
    async putText(key, text) {
      await realFolder(root, parentKey(key), true);
      await writeFileAtomic(path(key), text);
    },
    async createText(key, text) {
      await realFolder(root, parentKey(key), true);
      if (await writeFileIfAbsent(path(key), text)) return true;
      // Something was there and is left as it was; only a file counts as "already created".
      await assertFileAt(root, path(key));
      return false;
    },
    getText: (key) => readText(path(key)),
    size: async (key) => {
      const info = await ifFound(stat(path(key)), path(key));
      return info?.isFile() === true ? info.size : undefined;
    },
    keys: (prefix) => keysUnder(at, prefix),
    list: async (prefix) => {
      const keys: string[] = [];
      for await (const key of keysUnder(at, prefix)) keys.push(key);
      return keys.sort();
    },
    remove: (keys) => removeKeys(at, keys),
    removeTree: (folder, owned) => removeTree(at, folder, owned),
    read: (key) => openRead(path(key)),
    localCopy: (key) => fileOf(at, key),
    async lock(key, what, options) {
      await realFolder(root, parentKey(key), true);
      return acquireLock(path(key), what, logger, options);
    },
    lockState: (key) => inspectLock(path(key)),
    async checkWritable(dirs, files) {
      // A link on the way to any of them is refused first: nothing is written through it.
      for (const folder of new Set([...dirs, ...files.map(parentKey)])) await realFolder(root, folder, false);
      await assertWritable(dirs.map(path), files.map(path));
    },
    probe: () => assertCreatable(root),
    async prepare() {
      created = await createFolder(root);
    },
    async close() {
      if (created) await rmdir(root).catch(() => undefined);
    },
  };
}

/** An output folder: its absolute path, and the way between keys and files. */
interface Folder {
  root: string;
  path: (key: string) => string;
  keyOf: (file: string) => string;
}

function folderAt(dir: string): Folder {
  const root = resolve(dir);
  return {
    root,
    path: (key) => join(root, ...key.split('/')),
    keyOf: (file) => relative(root, file).split(sep).join('/'),
  };
}

/** The folder of a key ('' for the root). */
function parentKey(key: string): string {
  return key.slice(0, Math.max(0, key.lastIndexOf('/')));
}

/**
 * Refuses what createText found at `file` when it is not a file: a symbolic link (LinkInOutputError:
 * its target, inside the output or not, is never taken for the object) or a folder (OutputError).
 * A file gone again since is fine: it was there.
 */
async function assertFileAt(root: string, file: string): Promise<void> {
  const info = await ifFound(lstat(file), file);
  if (info === undefined || info.isFile()) return;
  if (info.isSymbolicLink()) {
    const target = await readlink(file).catch(() => undefined);
    throw new LinkInOutputError(
      `${file} is a symbolic link${target === undefined ? '' : ` (to ${target})`} inside the output folder ${root}, where bulk-extract creates a file of its own: it never writes through a link in its output, nor takes one for its own file. Remove the link.`,
    );
  }
  throw new OutputError(`${file} exists and is not a file, so it cannot be created there; move it away.`);
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CheckpointError(`Cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`, {
      cause: error,
    });
  }
}

function openRead(file: string): Promise<NodeJS.ReadableStream> {
  return new Promise((resolveStream, reject) => {
    const stream = createReadStream(file);
    stream.once('open', () => resolveStream(stream));
    stream.once('error', (error) => reject(outputError('Reading', file, error)));
  });
}

/** The file of `key` itself: a folder needs no copy. */
async function fileOf(at: Folder, key: string): Promise<LocalCopy> {
  const file = at.path(key);
  const info = (await realFolder(at.root, parentKey(key), false)) ? await ifFound(stat(file), file) : undefined;
  if (info?.isFile() !== true) throw new OutputError(`${file} does not exist.`);
  return { path: file, release: () => Promise.resolve() };
}

/** Creates the output folder; true when it did not exist before. */
async function createFolder(root: string): Promise<boolean> {
  try {
    return (await mkdir(root, { recursive: true })) !== undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    const cause = deniedCause(code);
    throw new ConfigError(`output.dir: cannot create ${root} (${cause === undefined ? code : `${code}: ${cause}`}).`, {
      cause: error,
    });
  }
}

/** The keys under `prefix`, walking the folder it is in; only folders that can hold such keys are entered. */
async function* keysUnder(at: Folder, prefix: string): AsyncGenerator<string> {
  const folder = parentKey(prefix);
  if (!(await realFolder(at.root, folder, false))) return;
  const mayHold = (dir: string) => {
    const under = `${at.keyOf(dir)}/`;
    return under.startsWith(prefix) || prefix.startsWith(under);
  };
  for await (const file of filesUnder(folder === '' ? at.root : at.path(folder), mayHold)) {
    const key = at.keyOf(file);
    if (key.startsWith(prefix)) yield key;
  }
}

/**
 * The files under `folder` (paths), one folder at a time, in the byte order of their paths; a
 * folder below is entered when `enter` says so. A symbolic link is a file, never followed.
 */
async function* filesUnder(folder: string, enter: (dir: string) => boolean): AsyncGenerator<string> {
  const entries = await ifFound(readdir(folder, { withFileTypes: true }), folder);
  for (const entry of (entries ?? []).sort(byPathOrder)) {
    const path = join(folder, entry.name);
    if (!entry.isDirectory()) yield path;
    else if (enter(path)) yield* filesUnder(path, enter);
  }
}

/** Entries as their paths sort: a folder's name with its '/', compared as UTF-8 bytes (as S3 orders keys). */
function byPathOrder(a: Dirent, b: Dirent): number {
  const name = (entry: Dirent) => Buffer.from(entry.isDirectory() ? `${entry.name}/` : entry.name);
  return Buffer.compare(name(a), name(b));
}

async function removeKeys(at: Folder, keys: readonly string[]): Promise<void> {
  const checked = new Set<string>();
  for (const key of keys) {
    const folder = parentKey(key);
    if (!checked.has(folder) && !(await realFolder(at.root, folder, false))) continue;
    checked.add(folder);
    await removeOrFail(at.path(key));
  }
}

/** Deletes the files under `folder` that `owned` says are ours, then the folders left empty; resolves to the rest. */
async function removeTree(at: Folder, folder: string, owned: (key: string) => boolean): Promise<string[]> {
  if (!(await realFolder(at.root, folder, false))) return [];
  const folders = [at.path(folder)];
  const left: string[] = [];
  const entered = (dir: string) => {
    folders.push(dir);
    return true;
  };
  for await (const file of filesUnder(at.path(folder), entered)) {
    const key = at.keyOf(file);
    if (owned(key)) await removeOrFail(file);
    else left.push(key);
  }
  // Folders left empty go too, deepest first; a folder holding anything else stays.
  for (const dir of folders.reverse()) await rmdir(dir).catch(() => undefined);
  return left.sort();
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
