import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { createInterface } from 'node:readline';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, expect } from 'vitest';
import { stringify } from 'yaml';
import type { Format, Resource, StreamResource } from '../../src/config/job-schema.js';
import { type Checkpoint, parseCheckpoint, type PartitionSet } from '../../src/export/state/checkpoint.js';
import { shardSeq } from '../../src/export/state/layout.js';
import type { Manifest } from '../../src/export/state/manifest.js';
import type { RunRecord } from '../../src/export/run/run-records.js';
import {
  ASSET_ID_BASE,
  ASSET_ID_STRIDE,
  EVENT_ID_BASE,
  EVENT_ID_STRIDE,
  type ListFilter,
  type Simulator,
  type SimulatorOptions,
  startSimulator,
} from '../../src/simulator/index.js';
import type { Clock } from '../../src/util/clock.js';
import { resourceSpec } from '../../src/resources/index.js';
import { CLI } from './cli.js';
import { asNobody } from './unprivileged.js';

// ---------------------------------------------------------------------------------------------
// Temp folders, simulators and CLI processes (all cleaned up when the test file is done)
// ---------------------------------------------------------------------------------------------

const folders: string[] = [];
const children = new Set<ChildProcessWithoutNullStreams>();
const simulators: Simulator[] = [];

// Tests of these files run concurrently, so nothing is torn down per test: a child a failed test
// left running, the simulators and the temp folders all go when the file is done.
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
  await Promise.all(simulators.splice(0).map((sim) => sim.close()));
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A simulator of the test's own (so concurrent tests never see each other's requests). */
export async function newSimulator(options: SimulatorOptions): Promise<Simulator> {
  const sim = await startSimulator(options);
  simulators.push(sim);
  return sim;
}

/** A fresh temp folder, removed after the file's tests. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `bulk-extract-${prefix}-`));
  folders.push(dir);
  return dir;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  child: ChildProcessWithoutNullStreams;
  /** Resolves once the process exited and its output was read. */
  done: Promise<Exit>;
  /** Complete stderr lines so far. */
  readonly stderrLines: string[];
  /** Resolves with the first stderr line (past or future) matching `pattern`; rejects if it exits first. */
  waitForStderr(pattern: RegExp): Promise<string>;
  /** Calls `listener` with every complete stderr line from now on, and its 1-based number. */
  onStderrLine(listener: (line: string, index: number) => void): void;
}

export interface SpawnOptions {
  env?: Record<string, string>;
  cwd?: string;
  /** Run as the unprivileged user nobody (support/unprivileged.ts), so that file permissions bite. */
  unprivileged?: boolean;
}

/**
 * Starts the built CLI with `env` added to this process's environment (minus any failpoint, unless
 * given). Unlike support/cli.ts, it takes an environment and exposes stderr line by line.
 */
export function spawnCli(args: string[], options: SpawnOptions = {}): CliProcess {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.BULK_EXTRACT_CRASH_AT;
  Object.assign(env, options.env ?? {});
  const command = options.unprivileged === true ? asNobody(args) : { command: process.execPath, args: [CLI, ...args] };
  const child = spawn(command.command, command.args, { env, cwd: options.cwd ?? process.cwd() });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const stderrLines: string[] = [];
  const listeners: ((line: string, index: number) => void)[] = [];
  createInterface({ input: child.stderr }).on('line', (line) => {
    stderrLines.push(line);
    for (const listener of listeners) listener(line, stderrLines.length);
  });
  const done = new Promise<Exit>((resolve, reject) => {
    child.once('close', (code, signal) => {
      children.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
    // A process that could not be started (EAGAIN on a loaded machine, a cwd gone): the test fails
    // with it, rather than the worker with an unhandled 'error' event.
    child.once('error', (error) => {
      children.delete(child);
      reject(new Error(`could not start the CLI (${args.join(' ')}): ${error.message}`, { cause: error }));
    });
  });
  // Rejections are the awaiting test's to report; this keeps one no test awaited from going unhandled.
  done.catch(() => {});
  return {
    child,
    done,
    stderrLines,
    onStderrLine: (listener) => listeners.push(listener),
    waitForStderr: (pattern) =>
      new Promise<string>((resolve, reject) => {
        const seen = stderrLines.find((line) => pattern.test(line));
        if (seen !== undefined) return resolve(seen);
        listeners.push((line) => {
          if (pattern.test(line)) resolve(line);
        });
        void done.then(() => reject(new Error(`the CLI exited before logging ${String(pattern)}:\n${stderr}`)));
      }),
  };
}

/** Runs the CLI to its end. */
export function runCliWith(args: string[], options: SpawnOptions = {}): Promise<Exit> {
  return spawnCli(args, options).done;
}

/** A short description of an exit for assertion messages. */
export function describeExit(exit: Exit): string {
  return `code ${exit.code}, signal ${exit.signal}\n--- stdout\n${exit.stdout}\n--- stderr\n${exit.stderr.slice(-4000)}`;
}

// ---------------------------------------------------------------------------------------------
// Job files
// ---------------------------------------------------------------------------------------------

export interface StreamSpec {
  resource: Resource;
  name?: string;
  partitions?: number;
  limit?: number;
  filter?: Record<string, unknown>;
  metadataColumns?: string[];
  formats?: Format[];
  mode?: 'full' | 'incremental' | 'snapshot';
  safetyLag?: string | number;
  keep?: number;
}

export interface JobSpec {
  baseUrl: string;
  outDir: string;
  streams: StreamSpec[];
  formats?: Format[];
  maxRows?: number;
  /**
   * Parquet row group size; default 1000, so a 2000-row shard has two row groups (and the writer
   * does not size its buffers for the default 100k rows per shard, which costs ~30% CPU here).
   */
  rowGroupRows?: number;
  concurrency?: number;
  /** output.ndjson.compression; default none. */
  ndjsonCompression?: 'none' | 'gzip';
  /** The job's `checkpoint` key (default: none, so `<output.dir>/_checkpoint.json`). */
  checkpoint?: string;
  /** Replaces the default `auth` (api-key from ${SIM_KEY}). */
  auth?: Record<string, string>;
  /** Keep the default retry policy instead of the fast one (backoff of 1 to 5 ms). */
  defaultRetry?: boolean;
  /** output.table; default files. */
  table?: 'files' | 'delta';
}

/** The job as YAML, credential as `apiKey: ${SIM_KEY}`. */
export function jobYaml(spec: JobSpec): string {
  const job = {
    source: {
      baseUrl: spec.baseUrl,
      auth: spec.auth ?? { type: 'api-key', apiKey: '${SIM_KEY}' },
      ...(spec.concurrency === undefined ? {} : { concurrency: spec.concurrency }),
      ...(spec.defaultRetry === true ? {} : { retry: { baseDelayMs: 1, maxDelayMs: 5 } }),
    },
    streams: spec.streams,
    output: {
      dir: spec.outDir,
      formats: spec.formats ?? ['parquet', 'ndjson'],
      shard: { maxRows: spec.maxRows ?? 2000 },
      parquet: { rowGroupRows: spec.rowGroupRows ?? 1000 },
      ...(spec.ndjsonCompression === undefined ? {} : { ndjson: { compression: spec.ndjsonCompression } }),
      ...(spec.table === undefined ? {} : { table: spec.table }),
    },
    ...(spec.checkpoint === undefined ? {} : { checkpoint: spec.checkpoint }),
  };
  return stringify(job);
}

export function writeJob(file: string, spec: JobSpec): string {
  writeFileSync(file, jobYaml(spec));
  return file;
}

// ---------------------------------------------------------------------------------------------
// What the export must contain
// ---------------------------------------------------------------------------------------------

/**
 * What a stream must hold, by its key: for collections keyed by `id`, the count, sum, min and max
 * of the ids (exact as BigInt); for relationships (keyed by `externalId`), the sorted keys.
 */
export interface IdStats {
  count: number;
  sum: bigint;
  min: bigint;
  max: bigint;
  /** Keyed by externalId: every key, sorted (sum, min and max are then 0). */
  keys?: string[];
}

/** Ids of a whole resource in closed form: ids are BASE + i * STRIDE for i in [0, n). */
export function closedForm(resource: 'assets' | 'events', n: number): IdStats {
  const base = BigInt(resource === 'events' ? EVENT_ID_BASE : ASSET_ID_BASE);
  const stride = BigInt(resource === 'events' ? EVENT_ID_STRIDE : ASSET_ID_STRIDE);
  const count = BigInt(n);
  return {
    count: n,
    sum: count * base + (stride * count * (count - 1n)) / 2n,
    min: base,
    max: base + stride * (count - 1n),
  };
}

/** The keys a stream must export: every item of the collection, or those `filter` matches. */
/** `filter` as a job file gives it, in the simulator's form (its simple filters are the same). */
export function expectedIds(sim: Simulator, resource: Resource, filter?: Readonly<Record<string, unknown>>): IdStats {
  const set: Pick<Simulator['dataset']['events'], 'count' | 'matches'> & { item(index: number, metadata: boolean): object } =
    sim.dataset[resource];
  const key = resourceSpec(resource).key;
  const filtered = filter !== undefined && Object.keys(filter).length > 0;
  let count = 0;
  let sum = 0n;
  let min: bigint | undefined;
  let max = 0n;
  const keys: string[] = [];
  for (let i = 0; i < set.count; i++) {
    if (filtered && !set.matches(i, filter as ListFilter)) continue;
    const value = (set.item(i, false) as Record<string, unknown>)[key];
    count++;
    if (key === 'externalId') {
      keys.push(String(value));
      continue;
    }
    const id = BigInt(value as number);
    sum += id;
    min = min === undefined || id < min ? id : min;
    max = id > max ? id : max;
  }
  if (key === 'externalId') return { count, sum: 0n, min: 0n, max: 0n, keys: keys.sort() };
  return { count, sum, min: min ?? 0n, max };
}

// ---------------------------------------------------------------------------------------------
// Reading the output
// ---------------------------------------------------------------------------------------------

/** Every file under `dir`, relative, with `/` separators. */
export function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const found: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else found.push(relative(dir, path).split(sep).join('/'));
    }
  };
  walk(dir);
  return found.sort();
}

/**
 * Path -> sha256 of every file under `dir`: to prove a run changed nothing. The run records in
 * `_runs/` are left out: every run adds one, a refused one too (recordsIn() reads them).
 */
export function snapshot(dir: string): Record<string, string> {
  const files = listFiles(dir).filter((path) => !path.startsWith('_runs/'));
  return Object.fromEntries(files.map((path) => [path, sha256(join(dir, path))]));
}

/** The run records in `dir/_runs/`, oldest first. */
export function recordsIn(dir: string): { name: string; record: RunRecord }[] {
  return listFiles(join(dir, '_runs')).map((name) => ({
    name,
    record: JSON.parse(readFileSync(join(dir, '_runs', name), 'utf8')) as RunRecord,
  }));
}

export function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** The checkpoint of `out` (at `path` when the job names one; `some` partitions for a worker's). */
export function readCheckpoint(out: string, path = join(out, '_checkpoint.json'), parts: PartitionSet = 'all'): Checkpoint {
  return parseCheckpoint(readFileSync(path, 'utf8'), path, parts);
}

export function readManifest(out: string): Manifest {
  return JSON.parse(readFileSync(join(out, '_manifest.json'), 'utf8')) as Manifest;
}

const EXTENSIONS: Record<Format, string> = { parquet: 'parquet', ndjson: 'ndjson' };

/** A shard file of `format`: `.parquet`, or `.ndjson` plain or gzip. */
function isShardOf(path: string, format: Format): boolean {
  return format === 'parquet' ? path.endsWith('.parquet') : /\.ndjson(\.gz)?$/.test(path);
}

function sqlList(paths: readonly string[]): string {
  return `[${paths.map((p) => `'${p.replaceAll('\'', '\'\'')}'`).join(', ')}]`;
}

/** The files as a table of their key column (`id` BIGINT, or `externalId` VARCHAR for relationships). */
function reader(format: Format, paths: readonly string[], key: 'id' | 'externalId' = 'id'): string {
  return format === 'parquet'
    ? `read_parquet(${sqlList(paths)})`
    : `read_json(${sqlList(paths)}, format = 'newline_delimited', columns = {${key}: '${key === 'id' ? 'BIGINT' : 'VARCHAR'}'})`;
}

/** Runs queries on one in-memory DuckDB; each query's first row as JS values. */
export async function withDuckDb<T>(
  use: (query: (sql: string) => Promise<Record<string, unknown>>) => Promise<T>,
): Promise<T> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    return await use(async (sql) => {
      const result = await connection.runAndReadAll(sql);
      return result.getRowObjectsJS()[0] ?? {};
    });
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

export interface ExpectedStream {
  name: string;
  resource: StreamResource;
  partitions: number;
  formats: Format[];
  ids: IdStats;
}

/**
 * The output folder holds exactly the source data, and nothing else: per stream and format, count,
 * distinct ids, sum/min/max of ids equal the expectation; no temp files, no lock; every manifest
 * file exists with its size and sha256 and the shards on disk are exactly the manifest's; the
 * checkpoint's parts are all done; `_SUCCESS` exists.
 */
export async function expectExactOutput(
  out: string,
  streams: readonly ExpectedStream[],
  checkpointPath?: string,
): Promise<void> {
  const files = listFiles(out);
  expect(files.filter((f) => f.endsWith('.inprogress')), 'temp files left').toEqual([]);
  expect(files, 'lock left behind').not.toContain('.lock');
  expect(files, '_SUCCESS missing').toContain('_SUCCESS');

  const manifest = readManifest(out);
  expect(manifest.state).toBe('complete');
  for (const file of manifest.files) {
    const path = join(out, file.path);
    expect(existsSync(path), `manifest lists ${file.path}, which is missing`).toBe(true);
    expect(statSync(path).size, `size of ${file.path}`).toBe(file.bytes);
    expect(sha256(path), `sha256 of ${file.path}`).toBe(file.sha256);
  }
  const listed = manifest.files.map((f) => f.path).sort();
  expect(new Set(listed).size, 'manifest lists a file twice').toBe(listed.length);
  const shardsOnDisk = files.filter((f) => shardSeq(f.split('/').pop() ?? '') !== undefined);
  expect(shardsOnDisk, 'shards on disk vs manifest').toEqual(listed);

  const checkpoint = readCheckpoint(out, checkpointPath);
  await withDuckDb(async (query) => {
    for (const stream of streams) await expectStream(out, files, listed, checkpoint, manifest, stream, query);
  });
}

async function expectStream(
  out: string,
  files: readonly string[],
  listed: readonly string[],
  checkpoint: Checkpoint,
  manifest: Manifest,
  stream: ExpectedStream,
  query: (sql: string) => Promise<Record<string, unknown>>,
): Promise<void> {
  const state = checkpoint.streams[stream.name];
  expect(state, `checkpoint has stream ${stream.name}`).toBeDefined();
  const parts = Object.entries(state?.parts ?? {});
  expect(parts).toHaveLength(stream.partitions);
  for (const [m, part] of parts) {
    expect(part.done, `${stream.name} part ${m} done`).toBe(true);
    expect(part.cursor).toBeNull();
  }
  expect(parts.reduce((sum, [, p]) => sum + p.rows, 0), `${stream.name} rows in the checkpoint`).toBe(
    stream.ids.count,
  );
  expect(manifest.streams[stream.name]?.rows, `${stream.name} rows in the manifest`).toBe(stream.ids.count);
  expect(manifest.streams[stream.name]?.done).toBe(true);

  const dirs = [...new Set(files.filter((f) => f.startsWith(`${stream.name}/`)).map((f) => f.split('/')[1]))];
  const wantedDirs = Array.from({ length: stream.partitions }, (_, i) => `part=${i + 1}-of-${stream.partitions}`);
  for (const dir of dirs) expect(wantedDirs, `unexpected folder ${stream.name}/${dir}`).toContain(dir);

  for (const format of ['parquet', 'ndjson'] as const) {
    const paths = listed
      .filter((f) => f.startsWith(`${stream.name}/`) && isShardOf(f, format))
      .map((f) => join(out, f));
    if (!stream.formats.includes(format)) {
      expect(paths, `${stream.name} has ${format} files`).toEqual([]);
      continue;
    }
    if (stream.ids.count === 0) continue;
    expect(paths.length, `${stream.name} ${format} shards`).toBeGreaterThan(0);
    if (stream.ids.keys !== undefined) {
      // Keyed by externalId (relationships; instances of one kind): every key once, and exactly the expected ones.
      const got = await query(
        `SELECT count(*) AS n, count(DISTINCT externalId) AS d, list(externalId ORDER BY externalId) AS k FROM ${reader(format, paths, 'externalId')}`,
      );
      const keys = got.k as string[];
      expect({ n: got.n, d: got.d }, `${stream.name} as ${format}`).toEqual({
        n: BigInt(stream.ids.count),
        d: BigInt(stream.ids.count),
      });
      expect(keys, `${stream.name} keys as ${format}`).toEqual(stream.ids.keys);
      continue;
    }
    const got = await query(
      `SELECT count(*) AS n, count(DISTINCT id) AS d, sum(id) AS s, min(id) AS lo, max(id) AS hi FROM ${reader(format, paths)}`,
    );
    expect(
      { n: got.n, d: got.d, s: got.s, lo: got.lo, hi: got.hi },
      `${stream.name} as ${format}`,
    ).toEqual({
      n: BigInt(stream.ids.count),
      d: BigInt(stream.ids.count),
      s: stream.ids.sum,
      lo: stream.ids.min,
      hi: stream.ids.max,
    });
  }
}

export interface CrashState {
  checkpoint: Checkpoint | undefined;
  manifest: Manifest | undefined;
  /** Temp files (shards being written). */
  inprogress: string[];
  /** Shards on disk that the manifest does not list. */
  unlisted: string[];
  /** Shards the manifest lists at or past their partition's checkpointed next sequence number. */
  pastCheckpoint: string[];
}

/**
 * What a killed run left, checked against the invariants that hold at every instant: the manifest
 * and checkpoint (when present) parse; every file the manifest lists exists with its sha256; for
 * every checkpointed partition the shards before `nextSeq` exist in every format and hold exactly
 * the checkpoint's row count (data first, checkpoint last).
 */
export async function inspectCrashState(out: string): Promise<CrashState> {
  const files = listFiles(out);
  const manifest = existsSync(join(out, '_manifest.json')) ? readManifest(out) : undefined;
  const checkpoint = existsSync(join(out, '_checkpoint.json')) ? readCheckpoint(out) : undefined;
  for (const file of manifest?.files ?? []) {
    const path = join(out, file.path);
    expect(existsSync(path), `manifest lists ${file.path}, which is missing`).toBe(true);
    expect(sha256(path), `sha256 of ${file.path}`).toBe(file.sha256);
  }
  const pastCheckpoint: string[] = [];
  /** Per partition folder and format: the checkpointed shards and rows. */
  const expected: { dir: string; format: Format; paths: string[]; rows: number }[] = [];
  for (const [name, stream] of Object.entries(checkpoint?.streams ?? {})) {
    for (const [m, part] of Object.entries(stream.parts)) {
      const dir = `${name}/part=${m}-of-${stream.partitions}`;
      for (const file of manifest?.files ?? []) {
        if (file.stream === name && String(file.m) === m && file.seq >= part.nextSeq) pastCheckpoint.push(file.path);
      }
      for (const format of stream.formats) {
        const paths = Array.from(
          { length: part.nextSeq },
          (_, seq) => `${dir}/${String(seq).padStart(6, '0')}.${EXTENSIONS[format]}`,
        );
        for (const path of paths) expect(files, `checkpointed shard ${path} is missing`).toContain(path);
        expected.push({ dir, format, paths, rows: part.rows });
      }
    }
  }
  const parquet = expected.filter((e) => e.format === 'parquet').flatMap((e) => e.paths);
  const parquetRows = new Map<string, number>();
  if (parquet.length > 0) {
    await withDuckDb(async (query) => {
      const list = sqlList(parquet.map((p) => join(out, p)));
      const got = await query(
        `SELECT json_group_object(filename, n)::VARCHAR AS counts FROM (SELECT filename, count(*) AS n FROM read_parquet(${list}, filename = true) GROUP BY filename)`,
      );
      const counts = JSON.parse(String(got.counts)) as Record<string, number>;
      for (const [path, n] of Object.entries(counts)) parquetRows.set(relative(out, path).split(sep).join('/'), n);
    });
  }
  for (const { dir, format, paths, rows } of expected) {
    const got = paths.reduce(
      (sum, path) =>
        sum +
        (format === 'parquet'
          ? (parquetRows.get(path) ?? 0)
          : readFileSync(join(out, path), 'utf8').split('\n').filter((l) => l !== '').length),
      0,
    );
    expect(got, `rows of ${dir} as ${format} vs the checkpoint`).toBe(rows);
  }
  const listed = new Set((manifest?.files ?? []).map((f) => f.path));
  return {
    checkpoint,
    manifest,
    inprogress: files.filter((f) => f.endsWith('.inprogress')),
    unlisted: files.filter((f) => shardSeq(f.split('/').pop() ?? '') !== undefined && !listed.has(f)),
    pastCheckpoint,
  };
}

// ---------------------------------------------------------------------------------------------
// Clocks for the simulator
// ---------------------------------------------------------------------------------------------

/**
 * A simulator clock whose sleep() (the simulator's response latency) is a gate: while open, every
 * sleep returns at once; while closed, sleeps are held (their requests stay in flight) until
 * `open()`. `now()` is the real time plus what `advance()` added.
 */
export interface GatedClock extends Clock {
  /** Sleeps held now. */
  readonly held: number;
  /** Sleeps started so far. */
  readonly calls: number;
  /** Lets `n` more sleeps through, then holds the rest. */
  allow(n: number): void;
  /** Releases every held sleep and lets all later ones through. */
  open(): void;
  /** Resolves once at least `n` sleeps are held. */
  whenHeld(n: number): Promise<void>;
  advance(ms: number): void;
}

export function createGatedClock(passFirst = 0): GatedClock {
  let budget = passFirst;
  let offset = 0;
  let calls = 0;
  const held: (() => void)[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const notify = () => {
    for (const waiter of [...waiters]) {
      if (held.length >= waiter.n) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };
  return {
    now: () => Date.now() + offset,
    sleep: () => {
      calls++;
      if (budget > 0) {
        budget--;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        held.push(resolve);
        notify();
      });
    },
    get held() {
      return held.length;
    },
    get calls() {
      return calls;
    },
    allow: (n) => {
      budget = n;
      for (const release of held.splice(0, n)) {
        budget--;
        release();
      }
    },
    open: () => {
      budget = Number.POSITIVE_INFINITY;
      for (const release of held.splice(0)) release();
    },
    whenHeld: (n) =>
      new Promise<void>((resolve) => {
        waiters.push({ n, resolve });
        notify();
      }),
    advance: (ms) => {
      offset += ms;
    },
  };
}

export { seededRandom } from './seeded-random.js';

/** A job file in its own temp folder, against `sim`, writing to `<dir>/out`. */
export interface Job {
  sim: Simulator;
  dir: string;
  out: string;
  file: string;
  spec: JobSpec;
}

/** Writes a job (both formats, shards of 2000 rows unless `extra` says otherwise) into a new temp folder. */
export function newJob(sim: Simulator, streams: StreamSpec[], extra: Partial<JobSpec>, prefix: string): Job {
  const dir = tempDir(prefix);
  const out = join(dir, 'out');
  const spec: JobSpec = {
    baseUrl: sim.baseUrl,
    outDir: out,
    streams,
    formats: ['parquet', 'ndjson'],
    maxRows: 2000,
    ...extra,
  };
  return { sim, dir, out, file: writeJob(join(dir, 'job.yaml'), spec), spec };
}

/**
 * A finished export for the cases of a test file to copy: the job `spec(out)` run once with the
 * CLI against `sim` (its API key in SIM_KEY) into a folder of its own; resolves to that `out`.
 */
export async function finishedExport(
  sim: Simulator,
  key: string,
  spec: (outDir: string) => JobSpec,
  prefix: string,
): Promise<string> {
  const dir = tempDir(prefix);
  const out = join(dir, 'out');
  const file = writeJob(join(dir, 'job.yaml'), spec(out));
  const exit = await runCliWith(['run', '--config', file], { cwd: dir, env: { SIM_KEY: key } });
  expect(exit.code, describeExit(exit)).toBe(0);
  return out;
}
