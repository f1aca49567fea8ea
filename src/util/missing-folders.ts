import { chmod, lstat, mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/** The mode of a folder this creates: readable by others, as a node_exporter reading it needs. */
export const CREATED_FOLDER_MODE = 0o755;

/**
 * The folders of `dir` that do not exist yet, outermost first (none when `dir` exists). A
 * dangling symbolic link counts as missing: creating the folder there is then refused.
 */
export async function missingFolders(dir: string): Promise<string[]> {
  const missing: string[] = [];
  for (let at = resolve(dir); ; at = dirname(at)) {
    const info = await stat(at).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (info !== undefined) return missing;
    missing.unshift(at);
    if (dirname(at) === at) return missing;
  }
}

/**
 * Creates the part of the folder `dir` that is missing, as `mkdir -p` would, but only that part,
 * one folder at a time, each with mode 0755 whatever the umask, and never through a symbolic link:
 * a link where a folder is missing (one pointing nowhere) is refused, not followed. Folders that
 * exist, links among them, are used as they are. Returns the folders it created.
 */
export async function createMissingFolders(dir: string): Promise<string[]> {
  const created: string[] = [];
  for (const folder of await missingFolders(dir)) {
    try {
      await mkdir(folder, { mode: CREATED_FOLDER_MODE });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // Made meanwhile by someone else: a real folder is fine, a link or a file is not gone through.
      const info = await lstat(folder);
      if (info.isSymbolicLink()) throw new Error(`${folder} is a symbolic link to nowhere: no folder is created through it`);
      if (!info.isDirectory()) throw new Error(`${folder} is a file, not a folder`);
      continue;
    }
    await chmod(folder, CREATED_FOLDER_MODE);
    created.push(folder);
  }
  return created;
}
