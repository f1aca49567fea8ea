import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { delimiter, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/resume-harness.js';

/**
 * The Node.js version: the suite runs on one that package.json's engines allows, and the CLI run by
 * an older one says what it needs in one line (bin/node-version.js) before it loads dist/.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ENGINES = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
// Plain JavaScript without typings (bin/ is not compiled): its one export, typed here.
const { nodeVersionProblem } = await import(new URL('../../bin/node-version.js', import.meta.url).href) as {
  nodeVersionProblem: (found: string, required: string, node: string) => string | undefined;
};

describe('the Node.js the tests run on', () => {
  it("is one that package.json's engines allows", () => {
    expect(semver.validRange(ENGINES), `engines.node "${ENGINES}"`).not.toBeNull();
    expect(semver.satisfies(process.version, ENGINES), `Node.js ${process.version} (${process.execPath}) for engines ${ENGINES}`).toBe(true);
  });
});

describe('nodeVersionProblem', () => {
  it.each([
    ['v20.20.2', '>=24', true],
    ['v23.99.99', '>=24', true],
    ['v24.0.0', '>=24', false],
    ['v24.21.0', '>=24', false],
    ['v25.1.0', '>=24', false],
    ['v22.11.9', '>=22.12', true],
    ['v22.12.0', '>=22.12', false],
    ['v22.12.0', '>=22.12.1', true],
    ['v23.0.0', '>=22.12.1', false],
    ['v24.21.0', ' >= 24 ', false],
  ])('%s for %s: too old %s', (found, required, old) => {
    expect(nodeVersionProblem(found, required, '/usr/bin/node') !== undefined).toBe(old);
  });

  it('says in one line what is needed, what was found where, and how to get it', () => {
    expect(nodeVersionProblem('v20.20.2', '>=24', '/usr/bin/node')).toBe(
      'bulk-extract: needs Node.js >=24, found v20.20.2 (/usr/bin/node). In a clone, `npx bulk-extract` or an npm script runs it on the Node 24 that npm ci installed (node_modules/.bin/node); else install Node 24 (README, "Quick start").',
    );
  });

  it('agrees with semver for every version and every range of its form', () => {
    const part = fc.integer({ min: 0, max: 30 });
    const version = fc.tuple(part, part, part).map((parts) => parts.join('.'));
    const range = fc.oneof(part.map(String), fc.tuple(part, part).map((parts) => parts.join('.')), version).map((v) => `>=${v}`);
    fc.assert(fc.property(version, range, (found, required) => {
      expect(nodeVersionProblem(`v${found}`, required, 'node') === undefined).toBe(semver.satisfies(found, required));
    }));
  });

  it("reads this project's engines, and refuses a form it does not know instead of guessing", () => {
    expect(() => nodeVersionProblem(process.version, ENGINES, process.execPath)).not.toThrow();
    for (const required of ['^24', '24.x', '>=24 <26', '>24', '*']) {
      expect(() => nodeVersionProblem('v24.0.0', required, 'node'), required).toThrow(`engines.node: expected ">=MAJOR[.MINOR[.PATCH]]", got "${required}"`);
    }
    expect(() => nodeVersionProblem('24', '>=24', 'node')).toThrow('not a Node.js version: "24"');
  });
});

describe('bin/bulk-extract.js on a Node older than engines', () => {
  it('prints the one line, exits 2, and loads nothing of dist/ (a clone not built gets the same line)', ({ skip }) => {
    const old = olderNode();
    if (typeof old === 'string') {
      process.stderr.write(`node-version.test.ts: skipped: ${old}\n`);
      return skip(old);
    }
    const line = `${nodeVersionProblem(old.version, ENGINES, old.path)}\n`;
    const built = spawnSync(old.path, [join(ROOT, 'bin', 'bulk-extract.js'), '--version'], { encoding: 'utf8' });
    expect({ status: built.status, stdout: built.stdout, stderr: built.stderr }).toEqual({ status: 2, stdout: '', stderr: line });
    const clone = tempDir('old-node-clone');
    mkdirSync(join(clone, 'bin'));
    for (const file of ['bin/bulk-extract.js', 'bin/allocator.js', 'bin/node-version.js', 'package.json']) copyFileSync(join(ROOT, file), join(clone, file));
    const unbuilt = spawnSync(old.path, [join(clone, 'bin', 'bulk-extract.js'), '--help'], { encoding: 'utf8' });
    expect({ status: unbuilt.status, stdout: unbuilt.stdout, stderr: unbuilt.stderr }).toEqual({ status: 2, stdout: '', stderr: line });
  });
});

/**
 * A Node on this machine older than engines, outside any node_modules (where `npm ci` put the one
 * the tests run on): on PATH, or in /usr/local/bin or /usr/bin. Else why there is none.
 */
function olderNode(): { path: string; version: string } | string {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/local/bin', '/usr/bin'];
  const seen = new Set<string>();
  const found: string[] = [];
  for (const dir of dirs) {
    const path = join(dir, 'node');
    if (dir === '' || dir.split(sep).includes('node_modules') || !existsSync(path)) continue;
    const real = realpathSync(path);
    if (seen.has(real)) continue;
    seen.add(real);
    const version = spawnSync(path, ['--version'], { encoding: 'utf8' }).stdout.trim();
    found.push(`${path} ${version}`);
    if (semver.valid(version) !== null && !semver.satisfies(version, ENGINES)) return { path, version };
  }
  return `no Node older than engines (${ENGINES}) outside node_modules on PATH or in /usr/local/bin, /usr/bin (found: ${found.join(', ') || 'none'})`;
}
