import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { Simulator } from '../../src/simulator/index.js';
import { type FakeS3, startFakeS3 } from '../support/fake-s3.js';
import {
  describeExit,
  finishedExport,
  listFiles,
  newSimulator,
  runCliWith,
  type StreamSpec,
  tempDir,
} from '../support/resume-harness.js';

/**
 * `verify --config` on an s3:// output reads the bucket object by object through the store: a key
 * is only ever a key. A bucket may hold keys with `..` in them (AWS takes them), and a manifest may
 * be edited to name one; neither may make verify write, or read, anything outside its own
 * temporary files.
 */
const KEY = 'verify-bucket-key-0001';
const STREAMS: StreamSpec[] = [{ resource: 'events', partitions: 2, limit: 500 }];
const PREFIX = 'exports';
const AWS_ENV = { AWS_ACCESS_KEY_ID: 'fake-access-key', AWS_SECRET_ACCESS_KEY: 'fake-secret-key', AWS_REGION: 'us-east-1' };

let sim: Simulator;
/** The objects of a finished export, keyed as in the bucket. */
let exported: Map<string, Buffer>;
const servers: FakeS3[] = [];

beforeAll(async () => {
  sim = await newSimulator({ events: 2000, seed: 59, apiKeys: [KEY] });
  const spec = (outDir: string) => ({ baseUrl: sim.baseUrl, outDir, streams: STREAMS, formats: ['parquet' as const, 'ndjson' as const], maxRows: 500 });
  const out = await finishedExport(sim, KEY, spec, 'verify-bucket-template');
  exported = new Map(listFiles(out).map((path) => [`${PREFIX}/${path}`, readFileSync(join(out, path))]));
});

afterAll(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** Serves `objects`, writes a job whose output is that bucket, and runs verify --config on it. */
async function verifyBucket(objects: Map<string, Buffer>) {
  const s3 = await startFakeS3(objects);
  servers.push(s3);
  const dir = tempDir('verify-bucket');
  const file = join(dir, 'job.yaml');
  writeFileSync(
    file,
    stringify({
      source: { baseUrl: sim.baseUrl, auth: { type: 'api-key', apiKey: '${SIM_KEY}' } },
      streams: STREAMS,
      output: { dir: `s3://${s3.bucket}/${PREFIX}`, formats: ['parquet', 'ndjson'], s3: { endpoint: s3.endpoint, forcePathStyle: true } },
    }),
  );
  const exit = await runCliWith(['verify', '--config', file], { cwd: dir, env: { SIM_KEY: KEY, ...AWS_ENV } });
  return { exit, dir, s3 };
}

describe.concurrent('verify --config of a bucket', () => {
  it('an intact export verifies, and keys with .. in the bucket are never used as paths', async () => {
    const tag = randomBytes(6).toString('hex');
    const hostile = [
      `${PREFIX}/events/part=1-of-2/../../../../../../../../../../tmp/escape-${tag}`,
      `${PREFIX}/events/../../escape-${tag}`,
      `${PREFIX}/events/part=1-of-2/../000009.parquet`,
    ];
    const objects = new Map(exported);
    for (const key of hostile) objects.set(key, Buffer.from('written by a hostile bucket\n'));
    const { exit, dir, s3 } = await verifyBucket(objects);
    expect(exit.code, describeExit(exit)).toBe(0);
    expect(exit.stdout).toContain('OK: every file matches the manifest, every key is unique');
    expect(exit.stdout).toContain('2,000 keys checked; checkpoint compared');
    for (const key of hostile) expect(s3.gets, `${key} was read`).not.toContain(key);
    expect(existsSync(join(tmpdir(), `escape-${tag}`))).toBe(false);
    expect(existsSync(join('/tmp', `escape-${tag}`))).toBe(false);
    expect(listFiles(dir).filter((path) => path.includes(tag))).toEqual([]);
  });

  it('a manifest naming a path outside the output: exit 2, naming the entry; the object it names is not read', async () => {
    const objects = new Map(exported);
    const manifest = JSON.parse(objects.get(`${PREFIX}/_manifest.json`)?.toString() ?? '{}') as { files: { path: string }[] };
    const [first] = manifest.files;
    if (first === undefined) throw new Error('no files in the manifest');
    first.path = '../outside/000000.parquet';
    objects.set(`${PREFIX}/_manifest.json`, Buffer.from(JSON.stringify(manifest)));
    objects.set('outside/000000.parquet', Buffer.from('not of this export'));
    const { exit, s3 } = await verifyBucket(objects);
    expect(exit.code, describeExit(exit)).toBe(2);
    const named = String.raw`files\.0\.path: "\.\./outside/000000\.parquet" is not where shard \d+ of events partition \d/2 belongs`;
    expect(exit.stderr).toMatch(new RegExp(named));
    expect(s3.gets).not.toContain('outside/000000.parquet');
    expect(s3.gets.filter((key) => key.includes('..'))).toEqual([]);
  });
});
