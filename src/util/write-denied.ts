import { OutputAccessError } from '../errors.js';

/**
 * File-system refusals to write at all: this user may not (EACCES), the file system is mounted
 * read-only (EROFS), or the folder or file is immutable or append-only (EPERM). Unlike a full disk
 * or an I/O error, they do not pass by themselves: running again changes nothing until the folder
 * does, so they end a run with exit 2 (OutputAccessError), not 1.
 */
const DENIED: Readonly<Record<string, { cause: () => string; fix: string }>> = {
  EACCES: {
    cause: () => `this user (uid ${process.getuid?.() ?? '?'}) may not write there`,
    fix: 'Make it writable for this user',
  },
  EROFS: { cause: () => 'the file system is read-only', fix: 'Mount it read-write' },
  EPERM: {
    cause: () =>
      'the operation is not permitted whatever the permissions: the folder or file is immutable or append-only (lsattr shows the i or a flag), or a security policy forbids it',
    fix: 'Clear the flag (chattr -i or -a) or the policy',
  },
};

/** Whether a file-system error code is a refusal to write at all (see DENIED). */
export function isWriteDenied(code: string | undefined): boolean {
  return code !== undefined && Object.hasOwn(DENIED, code);
}

/** The cause of a refusal to write, in words, for a message; undefined for another code. */
export function deniedCause(code: string): string | undefined {
  return Object.hasOwn(DENIED, code) ? DENIED[code]?.cause() : undefined;
}

/**
 * A refusal to write `path` before the run changed anything: what refused it and what to do.
 * `why` replaces the code's usual cause when the caller knows better (a sticky folder).
 */
export function writeRefused(path: string, code: string, why = deniedCause(code) ?? code): OutputAccessError {
  const fix = Object.hasOwn(DENIED, code) ? (DENIED[code]?.fix ?? 'Fix it') : 'Fix it';
  return new OutputAccessError(
    `Cannot write to ${path} (${code}: ${why}). Nothing in the output folder was changed. ${fix}, or choose another folder with output.dir (or --out).`,
  );
}
