import { lstat, mkdir, readlink } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { BulkExtractError } from '../errors.js';
import { outputError } from './durable-file.js';

/**
 * A symbolic link (or a file) where the output needs a folder of its own. Writing or deleting
 * through it could reach files outside the output, so the run is refused as things stand.
 */
export class LinkInOutputError extends BulkExtractError {
  readonly code = 'E_LINK_IN_OUTPUT';
}

/**
 * The folder `rel` (a relative path, `/` or the platform's separator) under the folder `root`,
 * checked one component at a time: every component that exists must be a real folder, never a
 * symbolic link, so that nothing written or deleted below it can land outside `root`. With
 * `create`, missing components are created (one by one, never through a link); without, the
 * answer is false as soon as one is missing (or is a file).
 *
 * `root` itself may be a link (an output folder mounted elsewhere): the user named it. A `rel`
 * that leads out of `root` (`..`, a checkpoint kept elsewhere) is the user's too: it is created
 * as it is, without the check.
 */
export async function realFolder(root: string, rel: string, create: boolean): Promise<boolean> {
  const parts = rel.split(/[\\/]/).filter((part) => part !== '' && part !== '.');
  if (parts.includes('..') || isAbsolute(rel)) {
    const outside = join(root, rel);
    if (!create) return (await lstat(outside).catch(() => undefined))?.isDirectory() === true;
    await mkdir(outside, { recursive: true }).catch((error: unknown) => {
      throw outputError('Creating the folder', outside, error);
    });
    return true;
  }
  if (create) {
    // The output folder itself is the user's to name: created as it is, links and all.
    await mkdir(root, { recursive: true }).catch((error: unknown) => {
      throw outputError('Creating the folder', root, error);
    });
  }
  let at = root;
  for (const part of parts) {
    at = join(at, part);
    let info = await lstat(at).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw outputError('Reading', at, error);
    });
    if (info === undefined) {
      if (!create) return false;
      try {
        await mkdir(at);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw outputError('Creating the folder', at, error);
      }
      info = await lstat(at);
    }
    if (info.isSymbolicLink()) throw await linkErrorAt(root, at);
    if (!info.isDirectory()) {
      if (!create) return false;
      throw outputError('Creating the folder', at, Object.assign(new Error('a file is in the way'), { code: 'ENOTDIR' }));
    }
  }
  return true;
}

/** The error for a link at `at` inside the output `root`, naming where it points. */
export async function linkErrorAt(root: string, at: string): Promise<LinkInOutputError> {
  const target = await readlink(at).catch(() => undefined);
  const to = target === undefined ? '' : ` (to ${target})`;
  return new LinkInOutputError(
    `${at} is a symbolic link${to} inside the output folder ${root}: bulk-extract never writes or deletes through a link inside its output, where it could reach files outside it. Replace the link with a real folder, or point output.dir at the folder it links to.`,
  );
}
