import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/resume-harness.js';

/**
 * scripts/complete-lockfile.mjs on copies of this repository's package.json and lockfile: the
 * registry address of a package whose install script allowScripts approves (CONTRIBUTING.md,
 * "Node.js"), without which npm cannot match an approval of one version.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
type Lock = { packages: Record<string, Record<string, unknown>> };
type Manifest = { allowScripts: Record<string, boolean> };

function copyOfRepo(edit: (lock: Lock, manifest: Manifest) => void = () => {}): string {
  const dir = tempDir('complete-lockfile');
  mkdirSync(join(dir, 'scripts'));
  copyFileSync(join(ROOT, 'scripts', 'complete-lockfile.mjs'), join(dir, 'scripts', 'complete-lockfile.mjs'));
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as Lock;
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest;
  edit(lock, manifest);
  writeFileSync(join(dir, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return dir;
}

function complete(dir: string, ...args: string[]) {
  const done = spawnSync(process.execPath, [join(dir, 'scripts', 'complete-lockfile.mjs'), ...args], { encoding: 'utf8' });
  return { status: done.status, out: done.stdout + done.stderr };
}

const approved = () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest;
  const [spec = ''] = Object.keys(manifest.allowScripts);
  const at = spec.lastIndexOf('@');
  return { spec, name: spec.slice(0, at), version: spec.slice(at + 1) };
};

describe('scripts/complete-lockfile.mjs', () => {
  it("passes --check on this repository's lockfile, whose approved package has its registry address", () => {
    const { name, version } = approved();
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as Lock;
    expect(lock.packages[`node_modules/${name}`]?.resolved).toBe(`https://registry.npmjs.org/${name}/-/${name}-${version}.tgz`);
    expect(complete(copyOfRepo(), '--check').status).toBe(0);
  });

  it('adds the address an npm install left out, second in the entry as npm writes it; --check fails until then', () => {
    const { name, version } = approved();
    const dir = copyOfRepo((lock) => {
      delete lock.packages[`node_modules/${name}`]?.resolved;
    });
    const check = complete(dir, '--check');
    expect(check.status).toBe(1);
    expect(check.out).toContain(`the registry address of ${name}@${version}, whose install script allowScripts approves`);
    expect(complete(dir).status).toBe(0);
    const entry = (JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8')) as Lock).packages[`node_modules/${name}`] ?? {};
    expect(Object.keys(entry).slice(0, 3)).toEqual(['version', 'resolved', 'integrity']);
    expect(entry.resolved).toBe(`https://registry.npmjs.org/${name}/-/${name}-${version}.tgz`);
    expect(complete(dir, '--check').status).toBe(0);
  });

  it('refuses an approval of a version the lockfile does not have (a new version not reviewed), with or without --check', () => {
    const { spec, name, version } = approved();
    const dir = copyOfRepo((lock) => {
      const entry = lock.packages[`node_modules/${name}`] ?? {};
      entry.version = `${version}-next`;
      delete entry.resolved;
    });
    for (const args of [['--check'], []]) {
      const done = complete(dir, ...args);
      expect(done.status).toBe(1);
      expect(done.out).toContain(`allowScripts approves ${spec}, but package-lock.json has ${name}@${version}-next: review its install script, then approve "${name}@${version}-next" in allowScripts instead`);
    }
  });
});
