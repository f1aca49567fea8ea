import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { silentLogger } from '../../src/log.js';
import { createLocalStore, readDeltaLog } from '../../src/output/index.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { finish, type Finished } from '../support/cli.js';
import { type Duck, openDuck, parquetAt } from '../support/export-duckdb.js';
import { SIM_KEY } from '../support/export-harness.js';
import { filesUnder } from '../support/golden.js';

/**
 * A crash of the old build, resumed by the new build, gives exactly the output of an
 * uninterrupted run (issue 45: the engine is rearranged, and an output a killed run of the build
 * before left behind must resume under the build after). For each job and crash point: the old
 * build's CLI runs the job with BULK_EXTRACT_CRASH_AT=<point>:<n> and kills itself there; the new
 * build's CLI resumes it to the end; the output must hold what an uninterrupted run of the new
 * build writes: collection and instance shards with the same paths and sha256, and datapoints
 * streams the same rows (a resumed partition may cut its shards elsewhere, so neither their paths
 * nor their bytes: NDJSON lines, and Parquet rows read by DuckDB, as sorted lists); a Delta
 * table's latest version the same data files; and the new build's `verify` finds nothing wrong.
 * Only a run folder's name may differ (the CLI names it by the real clock): see contentOf.
 *
 * Jobs and crash points (BULK_EXTRACT_CRASH_AT, src/util/crash-point.ts): events in 3
 * partitions, assets and relationships, both formats, killed after an append, in the middle of a
 * Parquet file, after a shard's rename, between the manifest and the checkpoint, after the
 * checkpoint; raw datapoints with statuses and hourly aggregates, both formats, after an append,
 * a rename, a checkpoint; instances split by space and edges, both formats, the same three; events
 * and assets as Delta tables, after a rename, before the table's commit, with the commit under its
 * temporary name only, after the commit. 15 cases, about 95 s on a busy 2-core machine.
 *
 * Skipped unless OLD_DIST is set. A build is a `dist/` folder, or a checkout holding one, built,
 * with the packages it imports reachable from it (node_modules in the checkout or above). The
 * golden outputs' worktree is such a build of ea11329; another commit can be made one so:
 *
 *   git worktree add /tmp/wt-old ea11329 && ln -s "$PWD/node_modules" /tmp/wt-old/node_modules \
 *     && (cd /tmp/wt-old && npx tsc -p tsconfig.build.json)
 *   npm run build && OLD_DIST=/tmp/wt-old/dist npx vitest run test/golden/crash-across-builds.test.ts
 *
 * NEW_DIST (default: this checkout's dist/) names the build that resumes and is compared with;
 * `OLD_DIST=dist NEW_DIST=dist` checks the test itself on one build.
 */
const OLD_DIST = process.env.OLD_DIST;
const NEW_DIST = process.env.NEW_DIST ?? fileURLToPath(new URL('../../dist', import.meta.url));
/** Where datapoints windows end: after every point the simulator generates, so a run's now changes nothing. */
const END = Date.UTC(2026, 0, 1);

/**
 * The script that starts the CLI of a dist/ folder, or of a checkout holding one: the checkout's
 * bin/bulk-extract.js, or for a dist/ folder elsewhere, a script that calls its main() as that bin
 * does (written into the test's temp folder).
 */
function binOf(path: string): string {
  const dist = existsSync(join(path, 'dist', 'cli', 'main.js')) ? join(path, 'dist') : path;
  const main = resolve(dist, 'cli', 'main.js');
  if (!existsSync(main)) throw new Error(`${path}: neither ${path}/cli/main.js nor ${path}/dist/cli/main.js exists; build it first`);
  // The checkout's bin runs the dist/ beside it, so only a folder named dist is the one it runs.
  const bin = resolve(dist, '..', 'bin', 'bulk-extract.js');
  if (basename(resolve(dist)) === 'dist' && existsSync(bin)) return bin;
  const dir = mkdtempSync(join(tmpdir(), 'bulk-extract-crash-bin-'));
  dirs.push(dir);
  const script = join(dir, 'bulk-extract.mjs');
  const entry = JSON.stringify(pathToFileURL(main).href);
  writeFileSync(script, `const { main } = await import(${entry});\nprocess.exitCode = await main(process.argv.slice(2));\n`);
  return script;
}

const children = new Set<ChildProcessWithoutNullStreams>();
const bins = new Map<string, string>();

/** `bulk-extract ARGS` of the build at `dist`, with `env` added (and no failpoint unless given). */
async function cliOf(dist: string, args: string[], env: Record<string, string> = {}): Promise<Finished> {
  const bin = bins.get(dist) ?? binOf(dist);
  bins.set(dist, bin);
  const environment: NodeJS.ProcessEnv = { ...process.env, SIM_KEY, ...env };
  if (env.BULK_EXTRACT_CRASH_AT === undefined) delete environment.BULK_EXTRACT_CRASH_AT;
  delete environment.BULK_EXTRACT_FAIL_WRITE;
  const child = spawn(process.execPath, [bin, ...args], { env: environment });
  children.add(child);
  try {
    return await finish(child);
  } finally {
    children.delete(child);
  }
}

function said(exit: Finished): string {
  return `code ${exit.code}, signal ${exit.signal}\n--- stdout\n${exit.stdout}\n--- stderr\n${exit.stderr.slice(-3000)}`;
}

interface Job {
  name: string;
  streams: Record<string, unknown>[];
  formats: string[];
  table?: 'delta';
  /** Crash points with the hit to die at. */
  crashes: string[];
}

const JOBS: Job[] = [
  {
    name: 'collections',
    streams: [
      { resource: 'events', partitions: 3, limit: 40 },
      { resource: 'assets', partitions: 1, limit: 30 },
      { resource: 'relationships', partitions: 2, limit: 50 },
    ],
    formats: ['parquet', 'ndjson'],
    crashes: [
      'after-append:3',
      'after-encode-chunk:2',
      'after-shard-rename:2',
      'after-manifest-write:2',
      'after-checkpoint-write:3',
    ],
  },
  {
    name: 'datapoints',
    streams: [
      { resource: 'datapoints', name: 'points', partitions: 2, limit: 7, includeStatus: true, ignoreBadDataPoints: false, end: END },
      {
        resource: 'datapoints',
        name: 'hourly',
        partitions: 2,
        limit: 9,
        start: Date.UTC(2021, 0, 1),
        end: Date.UTC(2023, 0, 1),
        aggregates: ['count', 'average', 'min', 'max', 'sum'],
        granularity: '1h',
      },
    ],
    formats: ['parquet', 'ndjson'],
    crashes: ['after-append:4', 'after-shard-rename:2', 'after-checkpoint-write:2'],
  },
  {
    name: 'instances',
    streams: [
      {
        resource: 'instances',
        name: 'assets',
        view: { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' },
        spaces: ['sim_site_a', 'sim_site_b', 'sim_site_c'],
        split: 'space',
        limit: 30,
      },
      {
        resource: 'instances',
        name: 'links',
        view: { space: 'sim_model', externalId: 'ActivityLink', version: 'v1' },
        instanceType: 'edge',
        limit: 40,
      },
    ],
    formats: ['parquet', 'ndjson'],
    crashes: ['after-append:3', 'after-shard-rename:2', 'after-checkpoint-write:3'],
  },
  {
    name: 'delta',
    streams: [
      { resource: 'events', partitions: 2, limit: 40 },
      { resource: 'assets', partitions: 1, limit: 30 },
    ],
    formats: ['parquet'],
    table: 'delta',
    crashes: ['after-shard-rename:2', 'before-table-commit:1', 'after-create-temp:1', 'after-table-commit:2'],
  },
];

let sim: Simulator;
let duck: Duck;
const dirs: string[] = [];

beforeAll(async () => {
  if (OLD_DIST === undefined) return;
  sim = await startSimulator({
    seed: 4545,
    apiKeys: [SIM_KEY],
    assets: 90,
    events: 300,
    relationships: 120,
    timeseries: 30,
    datapoints: 6000,
    instances: { assets: 240, activities: 60, timeseries: 10, edges: 100 },
  });
  duck = await openDuck();
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  duck?.close();
  await sim?.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A folder with the job file of `job` writing into `out` under it. */
function jobFolder(job: Job, label: string): { file: string; out: string } {
  const dir = mkdtempSync(join(tmpdir(), `bulk-extract-crash-${label}-`));
  dirs.push(dir);
  const out = join(dir, 'out');
  const table = job.table === undefined ? {} : { table: job.table };
  const output = { dir: out, formats: job.formats, shard: { maxRows: 45 }, ...table };
  const source = { baseUrl: sim.baseUrl, auth: { type: 'api-key', apiKey: '${SIM_KEY}' }, retry: { baseDelayMs: 1, maxDelayMs: 5 } };
  const file = join(dir, 'job.yaml');
  writeFileSync(file, stringify({ source, streams: job.streams, output }));
  return { file, out };
}

/**
 * What must agree between two outputs of `job`: shard paths, and per shard or per stream what the
 * header says. A run folder (`run=<start>`, a Delta table's) is named by when its run started on
 * the real clock, which the CLI takes no other from: it is `run=<N>`, N its place among the run
 * folders of the output, by name.
 */
async function contentOf(job: Job, out: string): Promise<Record<string, unknown>> {
  const files = filesUnder(out);
  const runs = [...new Set(files.flatMap((path) => /\/(run=[^/]+)\//.exec(path)?.[1] ?? []))].sort();
  const named = (path: string) => path.replace(/\/run=[^/]+\//, (run) => `/run=<${runs.indexOf(run.slice(1, -1)) + 1}>/`);
  const shards = files.filter((path) => !path.includes('_delta_log/') && /\.(parquet|ndjson)$/.test(path));
  const pointStreams = new Set(job.streams.filter((s) => s.resource === 'datapoints').map((s) => String(s.name)));
  // A datapoints partition resumed may cut its shards elsewhere: its stream is compared by rows only.
  const content: Record<string, unknown> = {
    'shard paths': shards.filter((path) => !pointStreams.has(path.split('/')[0]!)).map(named),
  };
  for (const path of shards) {
    const stream = path.split('/')[0]!;
    const format = path.endsWith('.parquet') ? 'parquet' : 'ndjson';
    if (!pointStreams.has(stream)) {
      content[named(path)] = sha256Of(join(out, path));
      continue;
    }
    const key = `${stream} ${format} rows`;
    if (content[key] !== undefined) continue;
    const paths = shards.filter((p) => p.startsWith(`${stream}/`) && p.endsWith(`.${format}`)).map((p) => join(out, p));
    content[key] = format === 'ndjson' ? linesOf(paths) : await parquetRowsOf(paths);
  }
  for (const stream of job.table === 'delta' ? job.streams.map((s) => String(s.name ?? s.resource)) : []) {
    const table = await readDeltaLog(createLocalStore(out, silentLogger), stream);
    content[`${stream} Delta table files`] = table.files.map((file) => named(file.key)).sort();
  }
  return content;
}

function sha256Of(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** Every NDJSON line of the files, sorted. */
function linesOf(files: readonly string[]): string[] {
  return files.flatMap((file) => readFileSync(file, 'utf8').split('\n').filter((line) => line !== '')).sort();
}

/** Every Parquet row of the files as DuckDB prints it, sorted. */
async function parquetRowsOf(files: readonly string[]): Promise<string[]> {
  const rows = await duck.rows(`SELECT t::VARCHAR AS row FROM ${parquetAt(files)} t`);
  return rows.map((row) => String(row.row)).sort();
}

describe.skipIf(OLD_DIST === undefined).concurrent('a crash of the old build resumed by the new build gives exact output', () => {
  const cases = JOBS.flatMap((job) => job.crashes.map((crash) => [job.name, crash, job] as const));
  const reference = new Map<string, Promise<Record<string, unknown>>>();
  /** The new build's uninterrupted run of `job`, once per job. */
  const uninterrupted = (job: Job) => {
    const made = reference.get(job.name) ?? (async () => {
      const { file, out } = jobFolder(job, `${job.name}-whole`);
      const whole = await cliOf(NEW_DIST, ['run', '--config', file, '--log-level', 'warn']);
      expect(whole.code, said(whole)).toBe(0);
      return contentOf(job, out);
    })();
    reference.set(job.name, made);
    return made;
  };

  it.each(cases)('%s, killed at %s by the old build, resumed by the new', async (_name, crash, job) => {
    const { file, out } = jobFolder(job, `${job.name}-${crash.replace(':', '-')}`);
    const killed = await cliOf(OLD_DIST!, ['run', '--config', file, '--log-level', 'warn'], { BULK_EXTRACT_CRASH_AT: crash });
    expect(killed.signal, `the old build did not crash at ${crash}: ${said(killed)}`).toBe('SIGKILL');
    const resumed = await cliOf(NEW_DIST, ['run', '--config', file, '--log-level', 'warn']);
    expect(resumed.code, said(resumed)).toBe(0);
    const [got, expected] = [await contentOf(job, out), await uninterrupted(job)];
    expect(Object.keys(got).sort()).toEqual(Object.keys(expected).sort());
    for (const [key, value] of Object.entries(expected)) expect(got[key], key).toEqual(value);
    const verified = await cliOf(NEW_DIST, ['verify', out]);
    expect(verified.code, said(verified)).toBe(0);
  });
});
