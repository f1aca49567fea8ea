import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { bucketPathWithoutSlash } from '../../src/output/s3-bucket-path.js';
import { startSimulator } from '../../src/simulator/index.js';
import { fencedBlocks } from '../docs/fenced-blocks.js';
import { describeExit, runCliWith, tempDir } from '../support/resume-harness.js';

/**
 * docs/object-storage.md "Rehearsing on your machine", followed as written: a stock s3rver (started by the
 * doc's own command line: no shims, request signatures checked) and the simulator with its demo credentials;
 * the doc's job, with the ports this test got. Every bucket request (ListObjectsV2, DeleteObjects of the
 * probe and the lock) must be signed as s3rver checks it.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOC = 'docs/object-storage.md';
const blocks = fencedBlocks(readFileSync(join(ROOT, DOC), 'utf8'), DOC);
const section = (lang: string, has: string): string => {
  const block = blocks.find((b) => b.lang === lang && b.text.includes(has));
  if (block === undefined) throw new Error(`${DOC} has no ${lang} block with ${has}`);
  return block.text;
};

const servers: ChildProcessWithoutNullStreams[] = [];
afterAll(() => {
  for (const child of servers) if (child.exitCode === null) child.kill('SIGTERM');
});

/** The doc's s3rver command line, on a free port in `dir`; resolves to its endpoint. */
async function startStockS3rver(dir: string): Promise<string> {
  const line = section('sh', 's3rver').split('\n').find((l) => l.startsWith('node -e')) ?? '';
  const code = /^node -e '([^']+)'/.exec(line)?.[1];
  const bucket = / --configure-bucket (\S+)/.exec(line)?.[1];
  expect(code, line).toBeDefined();
  const child = spawn(process.execPath, ['-e', code ?? '', '--', '-d', dir, '-a', '127.0.0.1', '-p', '0',
    '--configure-bucket', bucket ?? ''], { cwd: ROOT });
  servers.push(child);
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const port = /S3rver listening on 127\.0\.0\.1:(\d+)/.exec(out)?.[1];
      if (port !== undefined) resolve(`http://127.0.0.1:${port}`);
    });
    child.once('error', reject);
    child.once('exit', (exitCode) => reject(new Error(`s3rver exited (${exitCode}): ${out}`)));
  });
}

/** Every object key s3rver holds in `bucketDir` (its files are the key plus a suffix of its own). */
function objectKeys(bucketDir: string): string[] {
  const files = readdirSync(bucketDir, { recursive: true, encoding: 'utf8' });
  return files.filter((f) => f.endsWith('._S3rver_object')).map((f) => f.slice(0, -'._S3rver_object'.length)).sort();
}

describe('a local S3 rehearsal against a stock s3rver', () => {
  it('sends bucket requests to /bucket, which every server signs alike; object paths are left alone', () => {
    expect(bucketPathWithoutSlash('/lake/', 'lake', { Bucket: 'lake' })).toBe('/lake');
    expect(bucketPathWithoutSlash('/s3/lake/', 'lake', { Bucket: 'lake' })).toBe('/s3/lake');
    expect(bucketPathWithoutSlash('/', 'lake', { Bucket: 'lake' })).toBe('/');
    expect(bucketPathWithoutSlash('/lake/a/lake/', 'lake', { Bucket: 'lake', Key: 'a/lake/' })).toBe('/lake/a/lake/');
    expect(bucketPathWithoutSlash('/lake/x', 'lake', { Bucket: 'lake', Key: 'x' })).toBe('/lake/x');
  });

  it('runs, runs again and verifies as the doc says; the probe and the lock are deleted (DeleteObjects)', async () => {
    const dir = tempDir('s3-rehearsal');
    const endpoint = await startStockS3rver(join(dir, 's3rver'));
    const sim = await startSimulator({ events: 3000, assets: 10, clients: [{ id: 'demo', secret: 'demo-secret' }] });
    try {
      const job = section('yaml', 's3://rehearsal')
        .replaceAll('http://127.0.0.1:8080', sim.origin)
        .replace('http://127.0.0.1:4568', endpoint);
      writeFileSync(join(dir, 'rehearsal-s3.yaml'), job);
      const env = {
        CLIENT_SECRET: 'demo-secret',
        AWS_ACCESS_KEY_ID: 'S3RVER',
        AWS_SECRET_ACCESS_KEY: 'S3RVER',
        AWS_EC2_METADATA_DISABLED: 'true',
        TMPDIR: dir,
      };
      const cli = (command: string) => runCliWith([command, '--config', 'rehearsal-s3.yaml'], { cwd: dir, env });
      for (const command of ['run', 'run', 'verify', 'status']) {
        const exit = await cli(command);
        expect(exit.code, `${command}: ${describeExit(exit)}`).toBe(0);
        expect(exit.stderr).not.toContain('SignatureDoesNotMatch');
      }
      const keys = objectKeys(join(dir, 's3rver', 'rehearsal'));
      expect(keys.filter((key) => /(^|\/)(\.lock|_probe-[0-9a-f]+)$/.test(key))).toEqual([]);
      expect(keys).toContain('bulk-extract/_SUCCESS');
      expect(keys.filter((key) => key.startsWith('bulk-extract/events/')).length).toBeGreaterThanOrEqual(4);
    } finally {
      await sim.close();
    }
  }, 120_000);
});
