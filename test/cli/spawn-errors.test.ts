import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnCli, tempDir } from '../support/resume-harness.js';

/**
 * A CLI process that cannot be started (EAGAIN on a loaded machine, a working folder gone) fails
 * the test that started it with a message, never the test worker with an unhandled 'error' event.
 */
describe('spawnCli: a process that cannot be started', () => {
  it('rejects done with the reason, and nothing goes unhandled', async () => {
    const gone = join(tempDir('bulk-extract-spawn-'), 'gone');
    const cli = spawnCli(['--version'], { cwd: gone });
    await expect(cli.done).rejects.toThrow(/could not start the CLI \(--version\): spawn .* ENOENT/);
  });
});
