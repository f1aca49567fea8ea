import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ConfigError, type OutputAccessError } from '../errors.js';
import { writeRefused } from '../util/write-denied.js';

/**
 * Refuses, before anything is written, an output this process could not write: a folder it may
 * not create files in, or a file it may not replace (in a sticky folder such as a shared /tmp,
 * only a file's owner may). Missing folders and files are fine: they are created later.
 */
export async function assertWritable(dirs: readonly string[], files: readonly string[]): Promise<void> {
  for (const dir of new Set(dirs)) {
    const info = await stat(dir).catch(() => undefined);
    if (info === undefined) continue;
    if (!info.isDirectory()) throw writeRefused(dir, 'ENOTDIR', 'it is a file, not a folder');
    const code = await access(dir, constants.W_OK | constants.X_OK).then(
      () => undefined,
      (error: NodeJS.ErrnoException) => error.code ?? 'EACCES',
    );
    if (code !== undefined) throw writeRefused(dir, code);
  }
  const uid = process.getuid?.();
  if (uid === undefined || uid === 0) return;
  for (const file of new Set(files)) {
    const info = await stat(file).catch(() => undefined);
    const folder = await stat(dirname(file)).catch(() => undefined);
    if (info === undefined || folder === undefined) continue;
    const sticky = (folder.mode & 0o1000) !== 0;
    if (sticky && info.uid !== uid && folder.uid !== uid) {
      throw writeRefused(file, 'EPERM', `its folder is sticky and the file belongs to uid ${info.uid}, so uid ${uid} may not replace it`);
    }
  }
}

/** A folder that does not exist yet must be creatable: its nearest existing parent writable. */
export async function assertCreatable(dir: string): Promise<void> {
  for (let at = dir; ; at = dirname(at)) {
    const exists = await access(at).then(() => true, () => false);
    if (!exists) continue;
    if (at === dir) return;
    const writable = await access(at, constants.W_OK | constants.X_OK).then(() => true, () => false);
    if (!writable) throw new ConfigError(`output.dir: cannot create ${dir} (EACCES: ${at} is not writable).`);
    return;
  }
}

/** A file-system error on the way to writing `path`, before anything was written. */
export function cannotWrite(path: string, error: unknown): OutputAccessError {
  return writeRefused(path, (error as NodeJS.ErrnoException).code ?? 'error');
}
