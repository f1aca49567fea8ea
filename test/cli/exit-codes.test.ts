import { describe, expect, it } from 'vitest';
import { EXIT, exitCodeOf } from '../../src/cli/exit-codes.js';
import { CheckpointError, ConfigError, OutputAccessError, OutputError, UsageError } from '../../src/errors.js';
import { LockedError } from '../../src/output/lock.js';

describe('exitCodeOf: the exit code of an error, by its stable code', () => {
  it.each([
    [new LockedError('in use by another bulk-extract run'), 75],
    [new ConfigError('bad'), 2],
    [new UsageError('bad'), 2],
    [new CheckpointError('drift'), 2],
    [{ code: 'E_SYNC_CURSOR' }, 2],
    [{ code: 'E_AUTH' }, 3],
    [new OutputError('disk full'), 1],
    [new OutputAccessError('read-only file system'), 2],
    [{ code: 'E_ACCESS' }, 2],
    [{ code: 'E_HTTP_STATUS' }, 1],
    [{ code: 'E_SOMETHING_NEW' }, 1],
  ])('%o exits %i', (error, code) => {
    expect(exitCodeOf(error)).toBe(code);
  });

  it('75 is the overlap alone (EX_TEMPFAIL), apart from every other code', () => {
    expect(EXIT.OVERLAP).toBe(75);
    const codes = Object.values(EXIT);
    expect(new Set(codes).size).toBe(codes.length);
  });
});
