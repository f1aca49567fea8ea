import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * What the clone's own commands write into it stays out of git: `npm start` (the demo) writes
 * into the folder config/demo.yaml names, and the build, tests and runs their folders and files.
 * Read without git (a Docker build's context has no .git): a top-level folder is ignored by a
 * line that names it, with or without the leading and trailing slashes.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const lines = readFileSync(join(ROOT, '.gitignore'), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'));

function ignoresFolder(folder: string): boolean {
  return lines.some((line) => line.replace(/^\//, '').replace(/\/$/, '') === folder);
}

describe('.gitignore', () => {
  it("ignores the demo's output folder, named by config/demo.yaml", () => {
    const demo = parse(readFileSync(join(ROOT, 'config/demo.yaml'), 'utf8')) as { output: { dir: string } };
    const folder = demo.output.dir.replace(/^\.\//, '');
    expect(folder).toBe('demo-out');
    expect(ignoresFolder(folder)).toBe(true);
  });

  it('ignores what npm ci, the build and the tests leave in the clone', () => {
    expect(['node_modules', 'dist', 'out', 'coverage'].filter((folder) => !ignoresFolder(folder))).toEqual([]);
  });
});
