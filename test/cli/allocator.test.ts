import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, finish } from '../support/cli.js';
import { tempDir } from '../support/resume-harness.js';

/**
 * An export starts itself again with one malloc arena (bin/allocator.js): as the same process, so
 * that a signal or a kill sent to the process the user started reaches the export; a value the
 * user set is kept; other commands start once.
 */
// Plain JavaScript without typings (bin/ is not compiled): its one export, typed here.
type Restart = (env: NodeJS.ProcessEnv, platform: string, command: string | undefined) => NodeJS.ProcessEnv | undefined;
const { allocatorRestart, mayExecute } = await import(new URL('../../bin/allocator.js', import.meta.url).href) as {
  allocatorRestart: Restart;
  mayExecute: (path: string) => boolean;
};

describe('allocatorRestart', () => {
  it.each(['run', 'repair', 'demo'])('starts `%s` again on Linux with MALLOC_ARENA_MAX=1, the rest of the environment as it was', (command) => {
    expect(allocatorRestart({ PATH: '/bin', KEY: 'x' }, 'linux', command)).toEqual({ PATH: '/bin', KEY: 'x', MALLOC_ARENA_MAX: '1' });
  });

  it.each([
    ['a value the user set', { MALLOC_ARENA_MAX: '4' }, 'linux', 'run'],
    ['an empty value the user set', { MALLOC_ARENA_MAX: '' }, 'linux', 'run'],
    ['another system', {}, 'darwin', 'run'],
    ['a command that exports nothing', {}, 'linux', 'verify'],
    ['the simulator', {}, 'linux', 'simulate'],
    ['no command', {}, 'linux', undefined],
  ])('leaves the process as it is for %s', (_what, env, platform, command) => {
    expect(allocatorRestart(env, platform, command)).toBeUndefined();
  });
});

describe('mayExecute', () => {
  it('is true for the Node that runs, false for a file without execute permission and for none', () => {
    const plain = join(tempDir('allocator-plain'), 'node');
    writeFileSync(plain, '', { mode: 0o644 });
    expect(mayExecute(process.execPath)).toBe(true);
    expect(mayExecute(plain)).toBe(false);
    expect(mayExecute(join(tempDir('allocator-absent'), 'node'))).toBe(false);
  });
});

describe.runIf(process.platform === 'linux')('the CLI started again', () => {
  /** Runs the CLI with a module preloaded that records each start: its pid and MALLOC_ARENA_MAX. */
  type Start = { pid: number; arenas: string | null };
  async function starts(args: string[], env: NodeJS.ProcessEnv): Promise<{ pid: number; starts: Start[] }> {
    const dir = tempDir('allocator');
    const record = join(dir, 'starts.jsonl');
    const probe = join(dir, 'probe.mjs');
    writeFileSync(record, '');
    writeFileSync(
      probe,
      "import { appendFileSync } from 'node:fs';\n" +
      `appendFileSync(${JSON.stringify(record)}, JSON.stringify({ pid: process.pid, arenas: process.env.MALLOC_ARENA_MAX ?? null }) + '\\n');\n`,
    );
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...env, NODE_OPTIONS: `--import=${probe}` } });
    const done = await finish(child);
    expect(done.code, done.stderr).toBe(2);
    const lines = readFileSync(record, 'utf8').trim().split('\n');
    return { pid: child.pid!, starts: lines.map((line) => JSON.parse(line) as Start) };
  }

  const { MALLOC_ARENA_MAX: _unset, ...environment } = process.env;
  const missing = ['--config', join(tempDir('allocator-none'), 'no-such-job.yaml')];

  it('`run` runs as the process that was started, its second start with MALLOC_ARENA_MAX=1', async () => {
    const { pid, starts: seen } = await starts(['run', ...missing], environment);
    expect(seen).toEqual([{ pid, arenas: null }, { pid, arenas: '1' }]);
  });

  it('`run` with MALLOC_ARENA_MAX set starts once, the value kept', async () => {
    const { pid, starts: seen } = await starts(['run', ...missing], { ...environment, MALLOC_ARENA_MAX: '3' });
    expect(seen).toEqual([{ pid, arenas: '3' }]);
  });

  it('`verify` starts once', async () => {
    const { pid, starts: seen } = await starts(['verify', join(tempDir('allocator-verify'), 'nothing')], environment);
    expect(seen).toEqual([{ pid, arenas: null }]);
  });
});
