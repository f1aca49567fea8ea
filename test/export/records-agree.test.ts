import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { withDigest, withoutDigest } from '../../src/export/state/state-digest.js';
import {
  describeExit,
  expectedIds,
  expectExactOutput,
  type Exit,
  finishedExport,
  type JobSpec,
  listFiles,
  newSimulator,
  runCliWith,
  snapshot,
  type StreamSpec,
  tempDir,
  writeJob,
} from '../support/resume-harness.js';

/**
 * The checkpoint, the manifest and the files must tell one story. Each case edits one of them by
 * hand, as a user restoring a backup or a broken tool would, and checks that `verify` finds it and
 * that a run refuses to go on from it (changing nothing), or that `repair` reads the partition again.
 */
const KEY = 'records-key-0001';
const STREAMS: StreamSpec[] = [{ resource: 'events', partitions: 2, limit: 500 }];

let sim: Simulator;
let finished: string;

beforeAll(async () => {
  sim = await newSimulator({ events: 6000, seed: 53, apiKeys: [KEY] });
  finished = await finishedExport(sim, KEY, spec, 'records-template');
});

function spec(outDir: string): JobSpec {
  return { baseUrl: sim.baseUrl, outDir, streams: STREAMS, formats: ['parquet', 'ndjson'], maxRows: 1000 };
}

function run(file: string, cwd: string, args: string[] = []): Promise<Exit> {
  return runCliWith(['run', '--config', file, ...args], { cwd, env: { SIM_KEY: KEY } });
}

interface Case {
  dir: string;
  out: string;
  file: string;
}

function copy(): Case {
  const dir = tempDir('records');
  const out = join(dir, 'out');
  cpSync(finished, out, { recursive: true });
  return { dir, out, file: writeJob(join(dir, 'job.yaml'), spec(out)) };
}

/** The parts of the files the cases edit by hand. */
interface PartJson {
  nextSeq: number;
  rows: number;
}
interface CheckpointJson {
  streams: Record<string, { parts: Record<string, PartJson> }>;
}
interface FileJson {
  path: string;
  m: number;
  seq: number;
  format: string;
  rows: number;
  bytes: number;
  sha256: string;
}
interface ManifestJson {
  streams: Record<string, { rows: number }>;
  files: FileJson[];
}

function edit<T>(path: string, change: (value: T) => void): void {
  const value = JSON.parse(readFileSync(path, 'utf8')) as T;
  change(value);
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Changes the checkpoint as if bulk-extract had written it so at another time (a backup restored):
 * with its digest made again, so that what is checked is its agreement with the manifest, not the
 * digest (checkpoint-edits.test.ts has the checkpoint edited by hand).
 */
function editCheckpoint(c: Case, change: (value: CheckpointJson) => void): void {
  const path = checkpointOf(c);
  const content = withoutDigest(JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>);
  change(content as unknown as CheckpointJson);
  writeFileSync(path, `${JSON.stringify(withDigest(content), null, 2)}\n`);
}

function partOf(value: CheckpointJson, m: string): PartJson {
  const part = value.streams.events?.parts[m];
  if (part === undefined) throw new Error(`no partition ${m}`);
  return part;
}

async function verify(c: Case): Promise<{ exit: Exit; problems: string[] }> {
  const exit = await runCliWith(['verify', c.out, '--json'], { cwd: c.dir });
  const problems = exit.stdout === '' ? [] : (JSON.parse(exit.stdout) as { problems: string[] }).problems;
  return { exit, problems };
}

/** A run refused before it changes anything: exit 2, the folder as it was (its record in _runs/ aside). */
async function refused(c: Case, args: string[] = []): Promise<Exit> {
  const before = snapshot(c.out);
  const exit = await run(c.file, c.dir, args);
  expect(exit.code, describeExit(exit)).toBe(2);
  expect(snapshot(c.out)).toEqual(before);
  return exit;
}

const checkpointOf = (c: Case) => join(c.out, '_checkpoint.json');
const manifestOf = (c: Case) => join(c.out, '_manifest.json');

describe.concurrent('checkpoint, manifest and files agree, or verify says so and a run refuses', () => {
  it('the intact export: verify checks the checkpoint and every key, and finds nothing', async () => {
    const { exit, problems } = await verify(copy());
    expect(exit.code, describeExit(exit)).toBe(0);
    expect(problems).toEqual([]);
    expect(JSON.parse(exit.stdout)).toMatchObject({ checkpointChecked: true, keysChecked: 6000 });
  });

  it('run --verify of the intact export: nothing to do, and verified, every key unique', async () => {
    const c = copy();
    const exit = await run(c.file, c.dir, ['--verify', '--json']);
    expect(exit.code, describeExit(exit)).toBe(0);
    expect(exit.stderr).toContain('verified: every shard matches the manifest; 6,000 keys checked, each unique');
    expect(JSON.parse(exit.stdout)).toMatchObject({ state: 'nothing-to-do', verified: { problems: [], keysChecked: 6000 } });
  });

  it('a partition\'s nextSeq lowered in the checkpoint (its rows too): verify names it; run refuses; repair reads it again', async () => {
    const c = copy();
    const manifest = JSON.parse(readFileSync(manifestOf(c), 'utf8')) as ManifestJson;
    const last = manifest.files.filter((f) => f.m === 1 && f.format === 'parquet').at(-1);
    editCheckpoint(c, (value) => {
      const part = partOf(value, '1');
      part.nextSeq -= 1;
      part.rows -= last?.rows ?? 0;
    });
    const { exit, problems } = await verify(c);
    expect(exit.code, describeExit(exit)).toBe(1);
    const said = 'events partition 1/2 (parquet): the checkpoint counts 2 shard(s), the manifest lists 3 (sequence numbers 0, 1, 2)';
    expect(problems).toContain(said);
    const refusal = await refused(c);
    expect(refusal.stderr).toContain(`${checkpointOf(c)} and ${manifestOf(c)} disagree, so resuming from them would lose or repeat rows`);
    expect(refusal.stderr).toContain('events partition 1/2 (parquet)');
    const repaired = await run(c.file, c.dir, ['--repair']);
    expect(repaired.code, describeExit(repaired)).toBe(0);
    expect(repaired.stderr).toContain('repair: reading events/1 again');
    await expectExactOutput(c.out, [{ name: 'events', resource: 'events', partitions: 2, formats: ['parquet', 'ndjson'], ids: expectedIds(sim, 'events') }]);
  });

  it('a partition\'s rows inflated in the checkpoint: verify names both counts; run refuses', async () => {
    const c = copy();
    editCheckpoint(c, (value) => {
      partOf(value, '2').rows += 1_000_000;
    });
    const { problems } = await verify(c);
    const counted = String.raw`^events partition 2/2 \(parquet\): the checkpoint counts 1,00\d,\d{3} rows, the manifest's shards \d,\d{3}$`;
    expect(problems).toContainEqual(expect.stringMatching(new RegExp(counted)));
    await refused(c);
  });

  it('the manifest\'s stream rows inflated: verify compares them with the shards\'', async () => {
    const c = copy();
    edit<ManifestJson>(manifestOf(c), (value) => {
      const stream = value.streams.events;
      if (stream !== undefined) stream.rows = 1_051_763;
    });
    const { exit, problems } = await verify(c);
    expect(exit.code).toBe(1);
    expect(problems).toContain('events: the manifest counts 1,051,763 rows, its parquet shards 6,000');
    expect(problems).toContain('events: the manifest counts 1,051,763 rows, its ndjson shards 6,000');
  });

  it('an NDJSON shard that lost lines, its manifest entry made to match: the formats disagree', async () => {
    const c = copy();
    edit<ManifestJson>(manifestOf(c), (value) => {
      const entry = value.files.find((f) => f.format === 'ndjson' && f.m === 1 && f.seq === 0);
      if (entry === undefined) throw new Error('no shard 0 of partition 1');
      const path = join(c.out, entry.path);
      const kept = readFileSync(path, 'utf8').split('\n').slice(0, 999).join('\n') + '\n';
      writeFileSync(path, kept);
      entry.rows = 999;
      entry.bytes = Buffer.byteLength(kept);
      entry.sha256 = createHash('sha256').update(kept).digest('hex');
    });
    const { exit, problems } = await verify(c);
    expect(exit.code).toBe(1);
    expect(problems).toContain('events partition 1/2 shard 0: the formats disagree (parquet 1,000, ndjson 999 rows)');
  });

  it.each([
    ['a partition deleted', (parts: Record<string, PartJson>) => delete parts['2'], 'no entry for partition 2'],
    [
      'a partition 7 of 2 added',
      (parts: Record<string, PartJson>) => (parts['7'] = partOf({ streams: { events: { parts } } }, '1')),
      'an entry "7", which is no partition',
    ],
  ])('%s in the checkpoint: refused when it is read (exit 2, E_CHECKPOINT), verify says so', async (_, change, said) => {
    const c = copy();
    editCheckpoint(c, (value) => change(value.streams.events?.parts ?? {}));
    const exit = await refused(c);
    expect(exit.stderr).toContain(`${checkpointOf(c)} is not a bulk-extract checkpoint (streams.events.parts: partitions: 2 wants entries 1 to 2, but there is ${said})`);
    const status = await runCliWith(['status', '--out', c.out], { cwd: c.dir });
    expect(status.code, describeExit(status)).toBe(2);
    const { exit: verified, problems } = await verify(c);
    expect(verified.code).toBe(1);
    expect(problems.join('\n')).toContain(said);
  });

  it('a manifest entry leading outside the output (../victim/file): verify fails naming it, run and repair refuse, nothing outside is touched', async () => {
    const c = copy();
    const victim = join(c.dir, 'victim');
    writeFileSync(victim, 'the user\'s data\n');
    let moved = '';
    edit<ManifestJson>(manifestOf(c), (value) => {
      const [first] = value.files;
      if (first === undefined) throw new Error('no files in the manifest');
      moved = first.path;
      first.path = '../victim';
    });
    const verified = await runCliWith(['verify', c.out], { cwd: c.dir });
    expect(verified.code, describeExit(verified)).toBe(2);
    const [, m, seq] = /part=(\d)-of-2\/0*(\d+)\./.exec(moved) ?? [];
    expect(verified.stderr).toContain(`files.0.path: "../victim" is not where shard ${seq} of events partition ${m}/2 belongs (${moved})`);
    for (const args of [[], ['--repair'], ['--fresh']]) {
      const exit = await refused(c, args);
      expect(exit.stderr).toContain('lists shards outside their partition\'s folder');
    }
    expect(readFileSync(victim, 'utf8')).toBe('the user\'s data\n');
    expect(existsSync(join(c.out, 'events', 'part=1-of-2', '000000.parquet'))).toBe(true);
    expect(listFiles(c.dir)).toContain('victim');
  });
});
