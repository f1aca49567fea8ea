import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { Format } from '../../src/config/job-schema.js';
import type { OutputStore } from '../../src/output/store.js';
import type { Simulator } from '../../src/simulator/index.js';
import {
  describeExit,
  type Exit,
  expectedIds,
  type ExpectedStream,
  expectExactOutput,
  type IdStats,
  listFiles,
  type StreamSpec,
  tempDir,
} from './resume-harness.js';
import { downloadAll } from './s3-download.js';

/**
 * The CLI export cases that hold for every object store output.dir can name (s3:// on s3rver,
 * abfss:// and az:// on Azurite): run, kill and resume, repair, a split job, snapshots. They are
 * written once here; each store's test file registers them, one call per case under its own title,
 * against a job of its store, and keeps the cases of its store alone to itself.
 *
 * The job a case starts: events in 2 partitions of pages of 1000, NDJSON, shards of 20,000 rows,
 * unless the case says otherwise.
 */

/** What a case sets of the job; the rest (the server, the URL, credentials) is the store's. */
export interface ExportOptions {
  stream?: StreamSpec;
  maxRows?: number;
  formats?: Format[];
}

/** A job that exports the simulator's events into a prefix of its own in the store under test. */
export interface StoreExport {
  sim: Simulator;
  /** output.dir */
  url: string;
  /** Where output.dir points inside the bucket or container (no slash at either end). */
  prefix: string;
  /** output.<store>.staging: the local folder a shard is written to before its upload. */
  staging: string;
  /** Runs the CLI with the job's config, its credentials and `env`. */
  cli: (args: string[], env?: Record<string, string>) => Promise<Exit>;
  /** A store the test opens itself, to read (and damage) what the CLI wrote. */
  store: OutputStore;
  /** The events of the default job, as expectExactOutput takes them. */
  expected: ExpectedStream[];
}

/** Starts a job of the store under test with a case's options: the caller picks the seed and the prefix. */
export type StartExport = (options?: ExportOptions) => Promise<StoreExport>;

/** Checks a store adds to the export case, where it can see more than the store shows. */
export interface ExportChecks {
  /** Right after the run, before anything reads the shards (`shards`: their keys). */
  afterRun?: (exported: StoreExport, exit: Exit, shards: string[]) => void;
  /** After verify and status. */
  afterStatus?: (exported: StoreExport) => Promise<void>;
}

/** Starts a log of the keys the server was asked to write (PUT) from now; returns its reader. */
export type WritesFromNow = () => () => string[];

/** Runs `body` with a job of the store, and closes the test's store after it. */
async function withExport(
  start: StartExport,
  options: ExportOptions,
  body: (exported: StoreExport) => Promise<void>,
): Promise<void> {
  const exported = await start(options);
  try {
    await body(exported);
  } finally {
    await exported.store.close();
  }
}

/** Every object of the store, downloaded and checked against `expected` as a local output folder. */
async function expectExactStore(store: OutputStore, expected: readonly ExpectedStream[]): Promise<void> {
  await expectExactOutput(await downloadAll(store, tempDir('store-copy')), expected);
}

/** The ids of the NDJSON shards of an output folder, as expectedIds counts them. */
function idsOf(out: string): IdStats {
  const ids = listFiles(out)
    .filter((path) => path.endsWith('.ndjson'))
    .flatMap((path) => readFileSync(join(out, path), 'utf8').split('\n').filter((line) => line !== ''))
    .map((line) => BigInt((JSON.parse(line) as { id: number }).id));
  expect(new Set(ids).size, 'every id once').toBe(ids.length);
  const sum = ids.reduce((total, id) => total + id, 0n);
  const min = ids.reduce((low, id) => (id < low ? id : low), ids[0] ?? 0n);
  const max = ids.reduce((high, id) => (id > high ? id : high), 0n);
  return { count: ids.length, sum, min, max };
}

/** An export lands in the store exactly, staging is left empty, and verify and status read it there. */
export function itExportsExactly(title: string, start: StartExport, checks: ExportChecks = {}): void {
  it(title, async () => {
    await withExport(start, {}, async (exported) => {
      const { cli, store, expected, staging, url } = exported;
      const exit = await cli(['run']);
      expect(exit.code, describeExit(exit)).toBe(0);
      const keys = await store.list('');
      expect(keys).toEqual(expect.arrayContaining(['_SUCCESS', '_checkpoint.json', '_manifest.json']));
      const shards = keys.filter((k) => k.endsWith('.ndjson'));
      expect(shards).toHaveLength(2);
      checks.afterRun?.(exported, exit, shards);
      await expectExactStore(store, expected);
      // Staging keeps no shard once uploaded.
      expect(listFiles(staging).filter((f) => f.endsWith('.ndjson'))).toEqual([]);

      const verify = await cli(['verify']);
      expect(verify.code, describeExit(verify)).toBe(0);
      expect(verify.stdout).toContain('ndjson: 2 files, 40,000 rows');
      const status = await cli(['status']);
      expect(status.code, describeExit(status)).toBe(0);
      expect(status.stdout).toContain(`${url}: run complete`);
      await checks.afterStatus?.(exported);
    });
  });
}

/**
 * Killed at `crashAt` (an after-upload-part failpoint: a part of some shard's upload received, the
 * upload not completed): the shard is absent, the resume uploads it and the output is exact.
 */
export function itResumesAKillMidUpload(title: string, start: StartExport, crashAt: string): void {
  it(title, async () => {
    await withExport(start, {}, async ({ cli, store, expected }) => {
      const killed = await cli(['run'], { BULK_EXTRACT_CRASH_AT: crashAt });
      expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
      const before = await store.list('');
      const checkpoint = JSON.parse((await store.getText('_checkpoint.json')) ?? '{}') as {
        streams: Record<string, { parts: Record<string, { nextSeq: number }> }>;
      };
      const counted = Object.values(checkpoint.streams.events?.parts ?? {}).reduce((n, p) => n + p.nextSeq, 0);
      // Only completed uploads are objects, and at most one more than the checkpoint counts exists.
      const shards = before.filter((k) => k.endsWith('.ndjson'));
      expect(shards.length).toBeLessThanOrEqual(counted + 1);
      expect(shards.length).toBeLessThan(2);
      expect(before).not.toContain('_SUCCESS');

      const resumed = await cli(['run']);
      expect(resumed.code, describeExit(resumed)).toBe(0);
      expect(resumed.stderr).toMatch(/resuming export/);
      await expectExactStore(store, expected);
    });
  });
}

/** Killed after an upload completed but before the checkpoint counted it: the shard is replaced, not doubled. */
export function itReplacesAnUncountedUpload(title: string, start: StartExport): void {
  it(title, async () => {
    await withExport(start, {}, async ({ cli, store, expected }) => {
      const killed = await cli(['run'], { BULK_EXTRACT_CRASH_AT: 'after-shard-rename:2' });
      expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
      const resumed = await cli(['run']);
      expect(resumed.code, describeExit(resumed)).toBe(0);
      await expectExactStore(store, expected);
    });
  });
}

/**
 * repair: a truncated and a corrupted shard are found in the store, only their partition is read
 * again, and the output is exact. `writesFromNow`, where the server keeps a log of requests, shows
 * as well that nothing of the other partition was written.
 */
export function itRepairsADamagedPartition(title: string, start: StartExport, writesFromNow?: WritesFromNow): void {
  // Four CLI runs against the store: 30 s is too little on a busy 2-core machine.
  it(title, { timeout: 120_000 }, async () => {
    // Shards of 5000 rows: 4 per partition.
    await withExport(start, { maxRows: 5000 }, async ({ sim, cli, store, expected, prefix }) => {
      const first = await cli(['run']);
      expect(first.code, describeExit(first)).toBe(0);
      const truncated = 'events/part=1-of-2/000001.ndjson';
      const corrupted = 'events/part=1-of-2/000002.ndjson';
      const whole = (await store.getText(truncated)) ?? '';
      await store.putText(truncated, whole.slice(0, Math.floor(whole.length / 2)));
      // One digit changed: the same size, another sha256.
      const text = (await store.getText(corrupted)) ?? '';
      const at = text.search(/[0-8](?=,)/);
      await store.putText(corrupted, `${text.slice(0, at)}${Number(text[at]) + 1}${text.slice(at + 1)}`);
      const untouched = await contents(store, 'events/part=2-of-2/');
      expect((await cli(['verify'])).code, 'verify finds the damage').toBe(1);

      const fromSim = sim.requests().length;
      const written = writesFromNow?.();
      const repair = await cli(['repair']);
      expect(repair.code, describeExit(repair)).toBe(0);
      expect(repair.stderr).toContain('read 1 damaged partition(s) again: events/1');
      const lists = sim.requests().slice(fromSim).filter((r) => r.route === 'GET /events');
      expect([...new Set(lists.map((r) => new Map(r.params).get('partition')))]).toEqual(['1/2']);
      if (written !== undefined) {
        const shards = written().filter((key) => key.startsWith(`${prefix}/events/`));
        expect(shards.filter((key) => !key.startsWith(`${prefix}/events/part=1-of-2/`)), 'partition 2 not written').toEqual([]);
      }
      expect(await contents(store, 'events/part=2-of-2/'), 'partition 2 as it was').toEqual(untouched);

      const verify = await cli(['verify']);
      expect(verify.code, describeExit(verify)).toBe(0);
      const copy = await downloadAll(store, tempDir('store-repaired'));
      // The rows, counted without a database: every event once; then the whole output.
      expect(idsOf(copy)).toEqual(expectedIds(sim, 'events'));
      await expectExactOutput(copy, expected);
    });
  });
}

/** A split job of 3 workers (--shard i/3): one killed and resumed alone, the last finalizes, the union is exact. */
export function itFinalizesASplitJob(title: string, start: StartExport): void {
  it(title, { timeout: 120_000 }, async () => {
    const stream: StreamSpec = { resource: 'events', partitions: 6, limit: 1000 };
    await withExport(start, { stream, maxRows: 2000, formats: ['parquet', 'ndjson'] }, async ({ cli, store, sim }) => {
      // Worker 1 is killed after its first shard is uploaded, before its checkpoint counts it.
      const exits = await Promise.all(
        [0, 1, 2].map((i) => cli(['run', '--shard', `${i}/3`], i === 1 ? { BULK_EXTRACT_CRASH_AT: 'after-shard-rename:1' } : {})),
      );
      expect(exits[1]?.signal, describeExit(exits[1] as Exit)).toBe('SIGKILL');
      for (const i of [0, 2]) expect(exits[i]?.code, describeExit(exits[i] as Exit)).toBe(0);
      expect(await store.getText('_SUCCESS'), 'not finalized while worker 1 is incomplete').toBeUndefined();
      expect(await store.getText('_workers/agreement.json')).toBeDefined();

      // Worker 1 alone: its lock (a dead process of this host) is taken over; it resumes and ends the split job.
      const resumed = await cli(['run', '--shard', '1/3']);
      expect(resumed.code, describeExit(resumed)).toBe(0);
      expect(resumed.stderr).toContain('the split job is finalized');
      const keys = await store.list('');
      expect(keys).toContain('_SUCCESS');
      expect(keys.filter((key) => key.startsWith('_workers/')), 'worker files and locks gone').toEqual([]);
      expect(keys.filter((key) => key.endsWith('.lock') || key.startsWith('.lock'))).toEqual([]);
      const verify = await cli(['verify']);
      expect(verify.code, describeExit(verify)).toBe(0);
      const expected = [
        { name: 'events', resource: 'events' as const, partitions: 6, formats: ['parquet' as const, 'ndjson' as const], ids: expectedIds(sim, 'events') },
      ];
      await expectExactStore(store, expected);
    });
  });
}

/** mode: snapshot: each run seals a copy in the store, _LATEST moves there, keep 1 deletes the older one. */
export function itSealsSnapshots(title: string, start: StartExport): void {
  it(title, async () => {
    const stream: StreamSpec = { resource: 'events', partitions: 2, limit: 1000, mode: 'snapshot', keep: 1 };
    await withExport(start, { stream }, async ({ cli, store }) => {
      const runs: string[] = [];
      for (const round of [1, 2]) {
        const exit = await cli(['run']);
        expect(exit.code, describeExit(exit)).toBe(0);
        const keys = await store.list('events/');
        const folders = [...new Set(keys.filter((k) => k.startsWith('events/run=')).map((k) => k.split('/')[1]))];
        expect(folders, `round ${round}: one snapshot kept`).toHaveLength(1);
        const [run = ''] = folders;
        expect(runs, `round ${round} is a new snapshot`).not.toContain(run);
        runs.push(run);
        expect(keys).toContain(`events/${run}/_SUCCESS`);
        expect((await store.getText('events/_LATEST'))?.trim()).toBe(run);
      }
      const status = await cli(['status']);
      expect(status.stdout).toContain(`latest complete snapshot: ${runs[1]} (1 kept)`);
      const verify = await cli(['verify']);
      expect(verify.code, describeExit(verify)).toBe(0);
    });
  });
}

/** Key -> content of every object under `prefix`. */
export async function contents(store: OutputStore, prefix: string): Promise<Record<string, string | undefined>> {
  const keys = await store.list(prefix);
  return Object.fromEntries(await Promise.all(keys.map(async (key) => [key, await store.getText(key)] as const)));
}
