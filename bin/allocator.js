// The memory allocator setting bin/bulk-extract.js starts an export with. Plain JavaScript, as
// bin/node-version.js, loaded before dist/.
//
// glibc's malloc gives threads arenas of their own (up to 8 per core) and keeps what was freed in
// each for later: a long export's peak RSS then grew with its length, by what the arenas kept, not
// by what the process held (bench/RESULTS.md, issue 46: 30M datapoints to NDJSON peaked 1.24 times
// as high as 10M by default, 1.04 times with one arena, at the same CPU). MALLOC_ARENA_MAX is read
// once, when a process starts: an export that finds it unset starts itself again (process.execve,
// the same process id) with it set to 1. A value the user gives is kept as it is.

import { accessSync, constants } from 'node:fs';

/** The commands that export, the ones started again: the others hold little and end soon. */
const EXPORTS = new Set(['run', 'repair', 'demo']);

/**
 * The environment to start the process again with, or undefined to go on as it is: on Linux (glibc
 * reads the variable; another C library ignores it), for an export (`command`, the first argument),
 * when `env` has no MALLOC_ARENA_MAX.
 */
export function allocatorRestart(env, platform, command) {
  if (platform !== 'linux' || env.MALLOC_ARENA_MAX !== undefined || !EXPORTS.has(command)) return undefined;
  return { ...env, MALLOC_ARENA_MAX: '1' };
}

/**
 * Whether this process may execute `path` (its Node): process.execve does not throw when it cannot,
 * it ends the process. A Node in a folder this user may not enter, or on a noexec mount, fails here.
 */
export function mayExecute(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
