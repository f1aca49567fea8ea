import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { delimiter, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fencedBlocks } from '../docs/fenced-blocks.js';
import { tempDir } from '../support/resume-harness.js';

/** The README's way from a clone to `bulk-extract` on PATH, followed as written; and a clone not built. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe('bulk-extract from a clone', () => {
  it("the README's script in ~/.local/bin puts it on PATH (nothing written outside HOME), from any folder, on the clone's Node", () => {
    const blocks = fencedBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'), 'README.md');
    const steps = blocks.find((block) => block.lang === 'sh' && block.text.includes('~/.local/bin'));
    expect(steps, 'README.md has the steps').toBeDefined();
    const home = tempDir('on-path-home');
    // A user's shell: no node_modules/.bin on PATH (npm puts it there for the tests), so the first
    // `node` is the machine's own, which may be older than engines.
    const userPath = (process.env.PATH ?? '').split(delimiter).filter((dir) => !dir.split(sep).includes('node_modules'));
    const env = { ...process.env, HOME: home, PATH: [join(home, '.local', 'bin'), ...userPath].join(delimiter) };
    const inClone = spawnSync('bash', ['-euc', steps?.text ?? ''], { cwd: ROOT, env, encoding: 'utf8' });
    expect(inClone.status, inClone.stderr).toBe(0);
    expect(inClone.stdout.trim()).toBe(VERSION);
    const elsewhere = spawnSync('bulk-extract', ['--version'], { cwd: tempDir('on-path-cwd'), env, encoding: 'utf8' });
    expect(elsewhere.status, elsewhere.stderr).toBe(0);
    expect(elsewhere.stdout.trim()).toBe(VERSION);
  });

  it('a clone without dist/ says to build it, names the file, exits 2, no stack trace', () => {
    const clone = tempDir('unbuilt-clone');
    mkdirSync(join(clone, 'bin'));
    for (const file of ['bin/bulk-extract.js', 'bin/allocator.js', 'bin/node-version.js', 'package.json']) copyFileSync(join(ROOT, file), join(clone, file));
    const exit = spawnSync(process.execPath, [join(clone, 'bin', 'bulk-extract.js'), '--help'], { encoding: 'utf8' });
    expect(exit.status).toBe(2);
    expect(exit.stderr).toBe(
      `bulk-extract: not built: ${join(clone, 'dist', 'cli', 'main.js')} is missing. Run npm ci (it builds dist/) or npm run build in ${clone}/.\n`,
    );
  });
});
