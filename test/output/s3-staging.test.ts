import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { createS3Store, STAGING_MARKER } from '../../src/output/s3-store.js';
import { tempDir } from '../support/resume-harness.js';

/**
 * output.s3.staging names a folder of the user's (/tmp, their home, `.`): the store works in a
 * folder of its own inside it, marked as its own, and cleans only what it proves it wrote there.
 * Nothing here talks to S3: preparing and closing the staging folder is local.
 */
const URL = 's3://bucket/prefix';

function store(staging: string) {
  return createS3Store({ url: URL, endpoint: 'http://127.0.0.1:9', region: 'us-east-1', staging, logger: silentLogger });
}

/** The pid of a process that ran and is gone. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

/** The staging root the store made in `staging`. */
function rootIn(staging: string): string {
  const [name, ...others] = readdirSync(staging).filter((entry) => entry.startsWith('bulk-extract-staging-'));
  expect(others).toEqual([]);
  if (name === undefined) throw new Error(`no staging root in ${staging}`);
  return join(staging, name);
}

describe('the S3 staging folder', () => {
  it('leaves every file and folder of the folder it is given alone, whatever their names', async () => {
    const staging = tempDir('staging-user');
    // A folder named as a gone process's would be: it is the user's, not in a folder of the store's.
    const lookalike = `${deadPid()}-deadbeef`;
    writeFileSync(join(staging, 'notes.txt'), 'mine\n');
    mkdirSync(join(staging, lookalike));
    writeFileSync(join(staging, lookalike, 'photo.jpg'), 'mine too\n');
    mkdirSync(join(staging, 'project'));
    const first = store(staging);
    await first.prepare();
    await first.close();
    const root = rootIn(staging);
    expect(readdirSync(staging).sort()).toEqual([lookalike, root.slice(staging.length + 1), 'notes.txt', 'project'].sort());
    expect(readFileSync(join(staging, 'notes.txt'), 'utf8')).toBe('mine\n');
    expect(readFileSync(join(staging, lookalike, 'photo.jpg'), 'utf8')).toBe('mine too\n');
  });

  it('works in a folder of its own, marked as its own, and each process in a folder of its own inside it', async () => {
    const staging = tempDir('staging-own');
    const s = store(staging);
    await s.prepare();
    const root = rootIn(staging);
    expect(readFileSync(join(root, STAGING_MARKER), 'utf8')).toContain(URL);
    const local = await s.stage('events/part=1-of-2/000000.parquet');
    expect(local.startsWith(`${root}/${process.pid}-`)).toBe(true);
    expect(lstatSync(dirname(local)).isDirectory()).toBe(true);
    await s.close();
    expect(readdirSync(root)).toEqual([STAGING_MARKER]);
  });

  it('deletes what processes that are gone left in its own folder, and nothing else there', async () => {
    const staging = tempDir('staging-gone');
    const first = store(staging);
    await first.prepare();
    await first.close();
    const root = rootIn(staging);
    const gone = join(root, `${deadPid()}-0123abcd`);
    mkdirSync(join(gone, 'events'), { recursive: true });
    writeFileSync(join(gone, 'events', '000000.parquet'), 'left by a killed run');
    writeFileSync(join(root, 'README'), 'someone put this here\n');
    const victim = tempDir('staging-victim');
    writeFileSync(join(victim, 'precious.txt'), 'mine\n');
    const link = join(root, `${deadPid()}-89abcdef`);
    symlinkSync(victim, link);
    const second = store(staging);
    await second.prepare();
    await second.close();
    expect(existsSync(gone)).toBe(false);
    expect(readFileSync(join(root, 'README'), 'utf8')).toBe('someone put this here\n');
    expect(readFileSync(join(victim, 'precious.txt'), 'utf8')).toBe('mine\n');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
  });

  it('a folder of its name still empty is another worker just starting: its marker is waited for', async () => {
    // The folder's name, as a store of the same output names it in another staging folder.
    const elsewhere = tempDir('staging-name');
    const named = store(elsewhere);
    await named.prepare();
    await named.close();
    const staging = tempDir('staging-race');
    const root = join(staging, basename(rootIn(elsewhere)));
    // A worker of the same split job has made the folder and not yet written its marker.
    mkdirSync(root);
    const second = store(staging);
    const prepared = second.prepare();
    await new Promise((resolve) => setTimeout(resolve, 120));
    writeFileSync(join(root, STAGING_MARKER), 'marked by the first worker\n');
    await prepared;
    await second.close();
  });

  it('refuses a folder of its name that it did not make (no marker), and changes nothing in it', async () => {
    const staging = tempDir('staging-foreign');
    const first = store(staging);
    await first.prepare();
    await first.close();
    const root = rootIn(staging);
    rmSync(join(root, STAGING_MARKER));
    const gone = join(root, `${deadPid()}-0123abcd`);
    mkdirSync(gone);
    writeFileSync(join(gone, 'data.csv'), 'mine\n');
    const before = readdirSync(root).sort();
    const second = store(staging);
    const refused = await second.prepare().then(() => undefined, (error: unknown) => error);
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as Error).message).toContain(`output.s3.staging: ${root} exists but is not a staging folder bulk-extract made`);
    await second.close();
    expect(readdirSync(root).sort()).toEqual(before);
  });
});
