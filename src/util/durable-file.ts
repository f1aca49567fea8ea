import { createHash, type Hash, randomBytes } from 'node:crypto';
import { type FileHandle, link, open, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { OutputAccessError, OutputError } from '../errors.js';
import { deniedCause, isWriteDenied } from './write-denied.js';
import { crashPoint, injectedWriteError } from './crash-point.js';

/** Suffix of a file being written: never a committed file, removed on resume. */
export const TEMP_SUFFIX = '.inprogress';

/** Makes a rename or a new file in `dir` durable (POSIX needs the directory itself fsynced). */
export async function fsyncDir(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (error) {
    // Some platforms (Windows) cannot open or fsync a directory; the rename is still atomic there.
    if (!['EISDIR', 'EPERM', 'EINVAL'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
  } finally {
    await handle?.close();
  }
}

/** Replaces `path` atomically: write a temp file, fsync it, rename it over `path`, fsync the folder. */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const file = await DurableFile.create(path);
  try {
    await file.write(typeof data === 'string' ? Buffer.from(data) : data);
    await file.commit();
  } catch (error) {
    await file.abort();
    throw error;
  }
}

/**
 * Creates `path` holding `data` only if nothing is there; true when this call created it, false
 * when something (a file, a link, anything) already was, which is left as it is. Atomic and
 * single-winner: the data goes into a temp file of this call's own beside it
 * (`<path>.<pid>-<random>.inprogress`, created exclusively, so never through a link), which is
 * fsynced and then hard-linked to `path`: link(2) fails with EEXIST instead of replacing anything
 * and never follows a link at `path`, so of callers racing for one path (in any process) exactly
 * one gets true, and a reader sees no file or the whole of it. The temp name is then unlinked and
 * the folder fsynced. A crash can leave the temp file (`.inprogress`, never `path` itself).
 * Needs a file system with hard links (every local POSIX one, NTFS); the folder must exist.
 */
export async function writeFileIfAbsent(path: string, data: string | Uint8Array): Promise<boolean> {
  const temp = `${path}.${process.pid}-${randomBytes(4).toString('hex')}${TEMP_SUFFIX}`;
  let created = false;
  try {
    const handle = await open(temp, 'wx');
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    crashPoint('after-create-temp');
    try {
      await link(temp, path);
      created = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    await unlink(temp);
    if (created) await fsyncDir(dirname(path));
    return created;
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw outputError('Creating', path, error);
  }
}

/**
 * A file written under a temporary name and put in place only by `commit()`: fsync, rename, fsync of
 * the folder. It counts its bytes and hashes them (sha256) as they are written, so committing costs
 * no second read.
 */
export class DurableFile {
  private readonly hash: Hash = createHash('sha256');
  private written = 0;

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
  ) {}

  static async create(path: string): Promise<DurableFile> {
    try {
      return new DurableFile(path, await createExclusive(`${path}${TEMP_SUFFIX}`));
    } catch (error) {
      throw outputError('Creating', path, error);
    }
  }

  get bytes(): number {
    return this.written;
  }

  async write(chunk: Uint8Array): Promise<void> {
    this.hash.update(chunk);
    this.written += chunk.length;
    try {
      const injected = injectedWriteError(this.path);
      if (injected !== undefined) throw injected;
      let offset = 0;
      while (offset < chunk.length) {
        const { bytesWritten } = await this.handle.write(chunk, offset, chunk.length - offset);
        offset += bytesWritten;
      }
    } catch (error) {
      throw outputError('Writing', this.path, error);
    }
  }

  async commit(): Promise<{ path: string; bytes: number; sha256: string }> {
    try {
      await this.handle.sync();
      await this.handle.close();
      await rename(`${this.path}${TEMP_SUFFIX}`, this.path);
      await fsyncDir(dirname(this.path));
    } catch (error) {
      throw outputError('Committing', this.path, error);
    }
    return { path: this.path, bytes: this.written, sha256: this.hash.digest('hex') };
  }

  /** Drops the temporary file; safe to call after a failed write or commit. */
  async abort(): Promise<void> {
    await this.handle.close().catch(() => undefined);
    await unlink(`${this.path}${TEMP_SUFFIX}`).catch(() => undefined);
  }
}

/**
 * Opens a new file for writing at `path`, created by this call: whatever was there (a temp file a
 * crash left, or a symbolic link) is unlinked first (a link itself, never its target), and the
 * file is then created exclusively (O_CREAT | O_EXCL, which never follows a link), so a write can
 * never land in a file this process did not create.
 */
export async function createExclusive(path: string): Promise<FileHandle> {
  await unlink(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
  return open(path, 'wx');
}

/**
 * A file-system failure as an error that names the file and says what is safe: an OutputError
 * (exit 1, run again to resume), or an OutputAccessError when the output may not be written at all
 * (EACCES, EROFS, EPERM: exit 2, as running again changes nothing until the folder does).
 */
export function outputError(doing: string, path: string, error: unknown): OutputError | OutputAccessError {
  const code = (error as NodeJS.ErrnoException).code ?? 'error';
  const cause = code === 'ENOSPC' ? 'the disk is full' : (deniedCause(code) ?? (error as Error).message);
  const failed = `${doing} ${path} failed (${code}: ${cause}). Shards committed before this and the checkpoint are intact`;
  if (isWriteDenied(code)) {
    return new OutputAccessError(`${failed}; make the output writable (or choose another folder), then run again to resume.`, { cause: error });
  }
  return new OutputError(`${failed}; fix the cause and run again to resume.`, { cause: error });
}
