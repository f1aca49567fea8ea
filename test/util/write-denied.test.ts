import { describe, expect, it } from 'vitest';
import { outputError } from '../../src/util/durable-file.js';
import { cannotWrite } from '../../src/output/folder-access.js';

/**
 * A write the file system refuses outright (EACCES, EROFS, EPERM) names its real cause and is
 * E_OUTPUT_ACCESS (exit 2: retrying as is fails again); a full disk or an I/O error stays E_OUTPUT
 * (exit 1: resumable).
 */
const failure = (code: string) => Object.assign(new Error(`${code}: injected`), { code });

describe('a refused write names its cause', () => {
  it.each([
    ['EROFS', 'E_OUTPUT_ACCESS', '(EROFS: the file system is read-only)'],
    ['EPERM', 'E_OUTPUT_ACCESS', '(EPERM: the operation is not permitted whatever the permissions: the folder or file is immutable'],
    ['EACCES', 'E_OUTPUT_ACCESS', '(EACCES: this user (uid '],
    ['ENOSPC', 'E_OUTPUT', '(ENOSPC: the disk is full)'],
    ['EIO', 'E_OUTPUT', '(EIO: EIO: injected)'],
  ])('%s in the middle of a run: %s', (code, expected, cause) => {
    const error = outputError('Writing', '/data/out/events/part=1-of-2/000000.ndjson', failure(code));
    expect(error.code).toBe(expected);
    expect(error.message).toContain(cause);
    expect(error.message).toContain('Shards committed before this and the checkpoint are intact');
  });

  it.each([
    ['EROFS', 'the file system is read-only). Nothing in the output folder was changed. Mount it read-write'],
    ['EPERM', 'lsattr shows the i or a flag), or a security policy forbids it). Nothing in the output folder was changed. Clear the flag'],
    ['EACCES', 'may not write there). Nothing in the output folder was changed. Make it writable for this user'],
  ])('%s before the run writes anything', (code, said) => {
    const error = cannotWrite('/data/out/.lock', failure(code));
    expect(error.code).toBe('E_OUTPUT_ACCESS');
    expect(error.message).toContain(`Cannot write to /data/out/.lock (${code}: `);
    expect(error.message).toContain(said);
  });
});
