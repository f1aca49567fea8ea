import { existsSync, lstatSync, mkdirSync, statSync, symlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMissingFolders, missingFolders } from '../../src/util/missing-folders.js';

/**
 * A metrics textfile's folder is created as node_exporter users expect: only the missing part,
 * mode 0755, never through a symbolic link.
 */
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function temp(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'bulk-extract-missing-folders-'));
  dirs.push(dir);
  return dir;
}

describe('createMissingFolders', () => {
  it('creates only the missing folders, outermost first, each 0755', async () => {
    const dir = await temp();
    const target = join(dir, 'node_exporter', 'textfile');
    expect(await missingFolders(target)).toEqual([join(dir, 'node_exporter'), target]);
    expect(await createMissingFolders(target)).toEqual([join(dir, 'node_exporter'), target]);
    for (const folder of [join(dir, 'node_exporter'), target]) expect(statSync(folder).mode & 0o777).toBe(0o755);
    expect(await createMissingFolders(target), 'nothing left to create').toEqual([]);
  });

  it('goes through a link that exists (a folder the user linked), creating below it', async () => {
    const dir = await temp();
    mkdirSync(join(dir, 'real'));
    symlinkSync(join(dir, 'real'), join(dir, 'linked'));
    expect(await createMissingFolders(join(dir, 'linked', 'textfile'))).toEqual([join(dir, 'linked', 'textfile')]);
    expect(statSync(join(dir, 'real', 'textfile')).isDirectory()).toBe(true);
  });

  it('never creates through a link that points nowhere', async () => {
    const dir = await temp();
    symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling'));
    await expect(createMissingFolders(join(dir, 'dangling', 'textfile'))).rejects.toThrow(
      `${join(dir, 'dangling')} is a symbolic link to nowhere: no folder is created through it`,
    );
    expect(existsSync(join(dir, 'nowhere'))).toBe(false);
    expect(lstatSync(join(dir, 'dangling')).isSymbolicLink()).toBe(true);
  });
});
