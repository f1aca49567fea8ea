import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import type { Manifest } from '../../src/export/state/manifest.js';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { runCli } from '../support/cli.js';
import { asNobody } from '../support/unprivileged.js';

const KEY = 'verify-test-key-0001';
let sim: Simulator;
let dir: string;
let out: string;
let configFile: string;

beforeAll(async () => {
  sim = await startSimulator({ assets: 300, events: 3000, apiKeys: [KEY] });
  dir = mkdtempSync(join(tmpdir(), 'bulk-extract-verify-'));
  out = join(dir, 'out');
  configFile = join(dir, 'job.yaml');
  writeFileSync(
    configFile,
    [
      'source:',
      `  baseUrl: ${sim.baseUrl}`,
      '  auth:',
      '    type: api-key',
      '    apiKey: ${SIM_KEY}',
      'streams:',
      '  - resource: events',
      '    partitions: 3',
      '  - resource: assets',
      '    partitions: 1',
      'output:',
      `  dir: ${out}`,
      '  formats: [parquet, ndjson]',
      '  ndjson: { compression: gzip }',
      '  shard: { maxRows: 500 }',
      '',
    ].join('\n'),
  );
  const result = await runJob({ config: loadConfig(configFile, { SIM_KEY: KEY }), logger: silentLogger });
  expect(result.state).toBe('complete');
});

afterAll(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

function manifest(): Manifest {
  return JSON.parse(readFileSync(join(out, '_manifest.json'), 'utf8')) as Manifest;
}

/** Runs `fn` on a copy of one shard and puts the original back afterwards. */
async function withDamagedShard(format: 'parquet' | 'ndjson', damage: (path: string) => void, check: () => Promise<void>) {
  const file = manifest().files.find((f) => f.format === format);
  if (file === undefined) throw new Error(`no ${format} shard`);
  const path = join(out, file.path);
  copyFileSync(path, `${path}.bak`);
  try {
    damage(path);
    await check();
  } finally {
    copyFileSync(`${path}.bak`, path);
    unlinkSync(`${path}.bak`);
  }
}

describe('bulk-extract verify', () => {
  it('passes an intact output: every listed file matches, per format row counts equal the data', async () => {
    const done = await runCli(['verify', out]);
    expect(done.code).toBe(0);
    expect(done.stdout).toContain('OK: every file matches the manifest');
    expect(done.stdout).toContain('parquet: ');
    expect(done.stdout).toContain('3,300 rows');
  });

  it('catches one corrupted byte in a Parquet shard (sha256), exit 1, naming the file', async () => {
    await withDamagedShard(
      'parquet',
      (path) => {
        const bytes = readFileSync(path);
        const at = Math.floor(bytes.length / 2);
        bytes.writeUInt8(bytes.readUInt8(at) ^ 0xff, at);
        writeFileSync(path, bytes);
      },
      async () => {
        const file = manifest().files.find((f) => f.format === 'parquet');
        const done = await runCli(['verify', out]);
        expect(done.code).toBe(1);
        expect(done.stdout).toContain(`${file?.path}: sha256`);
      },
    );
  });

  it('catches a truncated NDJSON shard (size, sha256 and an unreadable gzip)', async () => {
    await withDamagedShard(
      'ndjson',
      (path) => writeFileSync(path, readFileSync(path).subarray(0, 100)),
      async () => {
        const done = await runCli(['verify', out, '--json']);
        expect(done.code).toBe(1);
        const report = JSON.parse(done.stdout) as { problems: string[] };
        expect(report.problems.some((p) => p.includes('bytes in the output'))).toBe(true);
        expect(report.problems.some((p) => p.includes('unreadable ndjson'))).toBe(true);
      },
    );
  });

  it('opens with its verdict: FAILED and each problem first, then what it checked; a truncated shard is damaged, not missing', async () => {
    await withDamagedShard(
      'parquet',
      (path) => writeFileSync(path, readFileSync(path).subarray(0, 1000)),
      async () => {
        const file = manifest().files.find((f) => f.format === 'parquet');
        const done = await runCli(['verify', out]);
        expect(done.code).toBe(1);
        const lines = done.stdout.trimEnd().split('\n');
        expect(lines[0]).toMatch(/^FAILED: \d+ problem\(s\)$/);
        const problems = lines.slice(1, -1);
        expect(problems.length).toBeGreaterThan(0);
        expect(problems.every((line) => line.startsWith(`  - ${file?.path}: `))).toBe(true);
        expect(problems.some((line) => line.includes('damaged'))).toBe(true);
        expect(done.stdout).not.toContain('missing');
        expect(lines.at(-1)).toMatch(/^run complete, _SUCCESS present; /);
      },
    );
  });

  it('catches a missing shard and a shard the manifest does not list', async () => {
    const file = manifest().files[0];
    if (file === undefined) throw new Error('no shard');
    const path = join(out, file.path);
    const stray = join(out, 'events', 'part=1-of-3', '000099.ndjson.gz');
    copyFileSync(path, `${path}.bak`);
    unlinkSync(path);
    writeFileSync(stray, '');
    try {
      const done = await runCli(['verify', out]);
      expect(done.code).toBe(1);
      expect(done.stdout).toContain(`${file.path}: missing`);
      expect(done.stdout).toContain('events/part=1-of-3/000099.ndjson.gz: a shard file the manifest does not list');
    } finally {
      copyFileSync(`${path}.bak`, path);
      unlinkSync(`${path}.bak`);
      unlinkSync(stray);
    }
  });

  it('catches a row count that differs from the manifest', async () => {
    await withDamagedShard(
      'ndjson',
      () => {
        const text = readFileSync(join(out, '_manifest.json'), 'utf8');
        writeFileSync(join(out, '_manifest.json.orig'), text);
        const edited = manifest();
        const file = edited.files.find((f) => f.format === 'ndjson');
        if (file !== undefined) file.rows += 1;
        writeFileSync(join(out, '_manifest.json'), JSON.stringify(edited));
      },
      async () => {
        try {
          const done = await runCli(['verify', out]);
          expect(done.code).toBe(1);
          const [, inFile, inManifest] = /: (\d+) rows in the file, (\d+) in the manifest/.exec(done.stdout) ?? [];
          expect(Number(inManifest) - Number(inFile)).toBe(1);
        } finally {
          copyFileSync(join(out, '_manifest.json.orig'), join(out, '_manifest.json'));
          unlinkSync(join(out, '_manifest.json.orig'));
        }
      },
    );
  });

  it('a folder it may not list is an error naming it, not a pass (run as nobody: a real EACCES)', () => {
    const copy = mkdtempSync(join(tmpdir(), 'bulk-extract-verify-unlistable-'));
    try {
      cpSync(out, copy, { recursive: true });
      execFileSync('chmod', ['-R', 'a+rX', copy]);
      // Searchable, not listable: every listed file can still be read, only a stray file could hide.
      const folder = join(copy, 'events', 'part=1-of-3');
      chmodSync(folder, 0o311);
      const { command, args } = asNobody(['verify', copy]);
      const done = spawnSync(command, args, { encoding: 'utf8' });
      expect(done.status).toBe(1);
      expect(done.stderr).toContain(`Cannot read ${folder} (EACCES`);
      expect(done.stderr).not.toContain('    at ');
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('refuses a folder that is not an output, exit 2', async () => {
    const done = await runCli(['verify', dir]);
    expect(done.code).toBe(2);
    expect(done.stderr).toContain('has no _manifest.json');
  });
});

describe('bulk-extract status', () => {
  it('lists every stream and partition with rows, shards and done, from the checkpoint', async () => {
    const done = await runCli(['status', '--config', configFile], { ...process.env, SIM_KEY: KEY });
    expect(done.code).toBe(0);
    expect(done.stdout).toContain('run complete');
    const lines = done.stdout.split('\n').filter((line) => line.includes(' rows '));
    expect(lines).toHaveLength(4);
    expect(lines.every((line) => line.endsWith('done'))).toBe(true);
    expect(lines.some((line) => /events\s+1\/3\s+1,000 rows\s+1 shards/.test(line))).toBe(true);
    expect(lines.some((line) => /assets\s+1\/1\s+300 rows\s+1 shards/.test(line))).toBe(true);
  });

  it('--json gives per-partition progress a script can read', async () => {
    const done = await runCli(['status', '--config', configFile, '--json'], { ...process.env, SIM_KEY: KEY });
    const status = JSON.parse(done.stdout) as { state: string; parts: { rows: number; done: boolean }[] };
    expect(status.state).toBe('complete');
    expect(status.parts.reduce((sum, p) => sum + p.rows, 0)).toBe(3300);
  });

  it('status --config and verify --config read the output without the job\'s credential set; run still needs it', async () => {
    const unset = { ...process.env, SIM_KEY: '' };
    const status = await runCli(['status', '--config', configFile], unset);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('run complete');
    const verify = await runCli(['verify', '--config', configFile], unset);
    expect(verify.code, verify.stderr).toBe(0);
    const run = await runCli(['run', '--config', configFile, '--dry-run'], unset);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('environment variable SIM_KEY is not set or empty');
  });

  it('says when the job has not run yet', async () => {
    const fresh = join(dir, 'fresh.yaml');
    writeFileSync(fresh, readFileSync(configFile, 'utf8').replace(`dir: ${out}`, `dir: ${join(dir, 'never')}`));
    const done = await runCli(['status', '--config', fresh], { ...process.env, SIM_KEY: KEY });
    expect(done.code).toBe(0);
    expect(done.stdout).toContain('has not run yet');
  });
});
