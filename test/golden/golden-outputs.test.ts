import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonReport } from '../../src/cli/run-report.js';
import type { JobConfig } from '../../src/config/load-config.js';
import { destinationOf, openOutput, readRunRecords, readStatus, recordRun, runJob } from '../../src/export/index.js';
import { silentLogger } from '../../src/log.js';
import { type InstanceKind, type InstanceRef, type Simulator, type SimulatorOptions, startSimulator } from '../../src/simulator/index.js';
import { runCli } from '../support/cli.js';
import { openDuck } from '../support/export-duckdb.js';
import { loadJob, SIM_KEY } from '../support/export-harness.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';
import { captureFolder, checkGolden, type Golden, Normaliser, type Step, textOf, UPDATE } from '../support/golden.js';

/**
 * Golden outputs of the export engine, kept before it is rearranged (issue 45: stream kinds as
 * plug-ins, behaviour unchanged), so that the rearranged engine can show that it writes the same
 * bytes. Each scenario runs a job against a seeded simulator, in this process, run after run, and
 * keeps in test/fixtures/golden/<scenario>.json, after each run, every file of the output: each
 * shard's sha256 and rows (NDJSON lines; Parquet rows counted by DuckDB), and the whole text of
 * every other file (`_manifest.json`, `_checkpoint.json`, `_runs/*.json`, a run folder's
 * `_manifest.json` and `_SUCCESS`, `_LATEST`, `_delta_log/*.json`); then what `status --json`
 * prints; and what the built CLI's `run --dry-run` prints before the first run and after the last.
 * The test compares all of it byte for byte and prints what differs, file by file, line by line.
 *
 *   npm run build && npx vitest run test/golden      compare (the dry run is the CLI of dist/)
 *   GOLDEN_UPDATE=1 npx vitest run test/golden       rewrite the fixtures (then read their diff)
 *
 * Scenarios: `collections`, the six collections in full (one listed by POST with a filter, one
 * with metadata columns), then a run with nothing to do; `datapoints`, raw points with their
 * statuses (bad ones too) and hourly aggregates in a window (Parquet, a shard a partition: see the
 * scenario); `instances`, nodes split by space,
 * nodes split by externalId ranges, the sync feed of nodes split by space and of edges
 * (incremental, twice: the backfill, then changes with deletes), and a snapshot kept 1;
 * `scheduled`, events incremental and assets snapshots kept 2 in both formats, and two Delta
 * tables (files incremental, sequences snapshots kept 1), three runs with the source changed
 * before each. Parquet and NDJSON throughout, small shards so that partitions write several.
 *
 * A run is what `bulk-extract run` does, in process: runJob on a fake clock (run k starts T0 + k
 * minutes), then the record the CLI writes to `_runs/` (jsonReport, recordRun, as src/cli/run.ts
 * does), so run folders, times and record names are the clock's. `status --json` is what
 * src/cli/status.ts prints (readStatus, then the last 5 run records), read at the run clock's now.
 * The simulator has a fake clock of its own, moved only to change its data between runs.
 *
 * Normalised, and nothing else (test/support/golden.ts; shard bytes never are):
 * 1. The scenario's temp folder is `<tmp>` (mkdtemp names it anew each time): in the run records'
 *    `destination`, status's `outDir`, the dry run's output and checkpoint lines.
 * 2. The simulator's `http://127.0.0.1:PORT` is `http://127.0.0.1:<port>` (it listens on a free
 *    port): `baseUrl` in the checkpoint and manifests. The checkpoint's `digest` covers it, so the
 *    digest is checked against the file as written, then computed again over the normalised
 *    content (sha256 of canonical JSON, by the test's own code, not the exporter's).
 * 3. Times of the real clock, which the code reads where it takes no injected clock, are
 *    `<wall clock: CALL>`: a time (epoch ms, ISO 8601, a run folder's or a run record's form) that
 *    falls while CALL ran (a bare JSON number becomes a string). They are: the times of each Delta
 *    log action (commitInfo.timestamp, txn.lastUpdated, metaData.createdTime, add.modificationTime,
 *    remove.deletionTimestamp: Date.now() in src/export/state/delta-table.ts) and status's
 *    `table.committedAt`, read from them; and the dry run's now (new Date() in src/cli/dry-run.ts):
 *    the lastUpdatedTime bound its requests would send, the run folder it would start, the end of
 *    a datapoints window. The injected clocks start at T0, the simulator's start (its live series'
 *    points reach T0 and grow as the clocks move) and before the real clock, so an injected time
 *    never falls in such a span, and the dry run sees every run in its past.
 * 4. A Delta table's `metaData.id`, a random UUID (src/output/delta/commit.ts), is `<table id N>`,
 *    N numbering the scenario's ids in the order they appear (a table keeps its id: it shows).
 * 5. A simulator cursor (`<base64url JSON>.<signature>`, in the checkpoint and the manifest of an
 *    instances sync stream, which keep the cursors the next run goes on from) is
 *    `<simulator cursor VERSION BINDING POSITION ISSUED * MARK>`: the simulator numbers every
 *    cursor it issues (src/simulator/cursor.ts, `serial`), so the number in a chain's cursor, and
 *    its signature, depend on how the chains drained at once took turns at the simulator. Its
 *    position, issue time and change sequence stay.
 * 6. A manifest's `files` (`_manifest.json` and a run folder's) are sorted by path, and a Delta
 *    commit's `add` and `remove` actions by path within the lines they held: shards are listed as
 *    they commit, and partitions drained at once commit in the order their pages happen to arrive
 *    (a version adds a run's files in its manifest's order). The manifest is first checked to be
 *    JSON.stringify(value, null, 2) exactly, so that sorting changes nothing but the order.
 * Nothing else varied between runs of ea11329 (three in a row, on a busy 2-core machine): request
 * counts, rows, shards and every other value were the same each time.
 */
/** The injected clocks start here: after every time the simulator generates (2019 to 2025), before the real clock. */
const T0 = Date.UTC(2026, 0, 1);
const SPACES = ['sim_site_a', 'sim_site_b', 'sim_site_c'];
const ASSET_VIEW = { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };

interface Scenario {
  name: string;
  simulator: SimulatorOptions;
  streams: (sim: Simulator) => Record<string, unknown>[];
  formats: string[];
  /** output.shard.maxRows: small, so that partitions write several shards (but datapoints'). */
  maxRows: number;
  runs: number;
  /** The changes made in the simulator before run `k` (2, 3, ...), at the simulator clock's `at`. */
  change?: (sim: Simulator, k: number, at: number) => void;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'collections',
    simulator: { seed: 4501, assets: 150, events: 400, timeseries: 120, files: 100, sequences: 60, relationships: 200 },
    streams: () => [
      { resource: 'assets', partitions: 1, limit: 40 },
      { resource: 'events', partitions: 3, limit: 50, metadataColumns: ['site', 'area'] },
      { resource: 'timeseries', partitions: 2, limit: 30 },
      // Listed by POST: a filter only the POST listing takes.
      { resource: 'files', partitions: 2, limit: 25, filter: { dataSetIds: ['DS-1', 4_000_000_000_002] } },
      { resource: 'sequences', partitions: 1, limit: 20 },
      { resource: 'relationships', partitions: 3, limit: 45 },
    ],
    formats: ['parquet', 'ndjson'],
    maxRows: 60,
    runs: 2,
  },
  {
    name: 'datapoints',
    simulator: { seed: 4502, timeseries: 30, datapoints: 6000 },
    streams: () => [
      // Every point of every series, bad ones too, with their statuses; the window ends at the run's now.
      { resource: 'datapoints', name: 'points', partitions: 3, limit: 7, includeStatus: true, ignoreBadDataPoints: false },
      {
        resource: 'datapoints',
        name: 'hourly',
        partitions: 2,
        limit: 9,
        start: Date.UTC(2025, 0, 1),
        end: Date.UTC(2026, 0, 1),
        aggregates: ['count', 'average', 'min', 'max', 'sum'],
        granularity: '1h',
      },
    ],
    // A partition takes its requests' answers in the order they come (drain-points.ts), so where a
    // shard is cut and the order of NDJSON lines follow the answers' timing: one shard a partition,
    // Parquet only (its rows sorted by series and time), so that the bytes are the build's alone.
    formats: ['parquet'],
    maxRows: 100_000,
    runs: 1,
  },
  {
    name: 'instances',
    simulator: { seed: 4503, instances: { assets: 240, activities: 90, timeseries: 25, edges: 120 } },
    streams: (sim) => {
      const ids = liveIds(sim, 'activity');
      return [
        { resource: 'instances', name: 'assets', view: ASSET_VIEW, spaces: SPACES, split: 'space', limit: 30 },
        {
          resource: 'instances',
          name: 'activities',
          view: { space: 'cdf_cdm', externalId: 'CogniteActivity', version: 'v1' },
          split: { property: 'externalId', at: [ids[30], ids[60]] },
          limit: 25,
        },
        { resource: 'instances', name: 'asset-changes', view: ASSET_VIEW, spaces: SPACES, split: 'space', mode: 'incremental', limit: 35 },
        {
          resource: 'instances',
          name: 'links',
          view: { space: 'sim_model', externalId: 'ActivityLink', version: 'v1' },
          instanceType: 'edge',
          mode: 'incremental',
          limit: 40,
        },
        {
          resource: 'instances',
          name: 'series',
          view: { space: 'cdf_cdm', externalId: 'CogniteTimeSeries', version: 'v1' },
          mode: 'snapshot',
          keep: 1,
          limit: 10,
        },
      ];
    },
    formats: ['parquet', 'ndjson'],
    maxRows: 50,
    runs: 2,
    change: (sim, _k, at) => {
      sim.updateInstances([3, 40, 41, 200].map((i) => refOf(sim, 'asset', i)), at);
      sim.insertInstances('asset', 3, at);
      sim.deleteInstances([7, 150].map((i) => refOf(sim, 'asset', i)), at);
      sim.deleteInstances([refOf(sim, 'edge', 11)], at);
      sim.updateInstances([refOf(sim, 'timeseries', 2)], at);
    },
  },
  {
    name: 'scheduled',
    simulator: { seed: 4504, assets: 80, events: 300, files: 90, sequences: 40 },
    streams: () => [
      { resource: 'events', partitions: 3, limit: 40, mode: 'incremental', safetyLag: 0 },
      { resource: 'assets', partitions: 1, limit: 30, mode: 'snapshot', keep: 2 },
      // Delta tables: one appended to by every window, one overwritten by every snapshot.
      { resource: 'files', partitions: 2, limit: 25, mode: 'incremental', safetyLag: 0, table: 'delta', formats: ['parquet'] },
      { resource: 'sequences', partitions: 1, limit: 15, mode: 'snapshot', keep: 1, table: 'delta', formats: ['parquet'] },
    ],
    formats: ['parquet', 'ndjson'],
    maxRows: 45,
    runs: 3,
    change: (sim, k, at) => {
      sim.update('events', [1, 50 + k, 299], at);
      sim.insert('events', 4 + k, at);
      sim.update('assets', [k], at);
      sim.update('files', [2, 3 * k], at);
      sim.insert('files', k, at);
      sim.update('sequences', [k], at);
    },
  },
];

/** The externalIds of the simulator's instances of `kind`, sorted. */
function liveIds(sim: Simulator, kind: InstanceKind): string[] {
  const ids: string[] = [];
  for (let index = 0; index < sim.instances.count(kind); index++) {
    ids.push(sim.instances.instance(kind, index).externalId);
  }
  return ids.sort();
}

function refOf(sim: Simulator, kind: InstanceKind, index: number): InstanceRef {
  const { space, externalId } = sim.instances.instance(kind, index);
  return { instanceType: kind === 'edge' ? 'edge' : 'node', space, externalId };
}

const dirs: string[] = [];

afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A run as `bulk-extract run` makes it, on the injected clock: runJob, then its record in `_runs/`. */
async function runAsCli(config: JobConfig, clock: FakeClock): Promise<void> {
  const result = await runJob({ config, logger: silentLogger, clock });
  expect(result.errors).toEqual([]);
  expect(result.state).toBe('complete');
  const report = jsonReport(result, 0, destinationOf(config));
  const endedAtMs = report.finishedAt === null ? clock.now() : Date.parse(report.finishedAt);
  await recordRun(config, report, { logger: silentLogger, now: () => endedAtMs });
}

/** The built CLI's stdout, with its exit code first; its stderr goes into the failure message only. */
async function cli(args: string[]): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, SIM_KEY };
  delete env.BULK_EXTRACT_CRASH_AT;
  delete env.BULK_EXTRACT_FAIL_WRITE;
  const exit = await runCli(args, env);
  expect(exit.signal, exit.stderr).toBeNull();
  return `exit code ${exit.code}\n${exit.stdout}`;
}

/**
 * What `bulk-extract status --config JOB --json` prints (src/cli/status.ts, runStatus: readStatus,
 * then the last 5 run records), with the status read at the run clock's now instead of the real one.
 */
async function statusJson(config: JobConfig, now: number): Promise<string> {
  const output = await openOutput(config, silentLogger);
  try {
    const status = await readStatus(output, now);
    const runs = await readRunRecords(output.store, 5, { logger: silentLogger });
    return `${JSON.stringify({ ...status, runs })}\n`;
  } finally {
    await output.store.close();
  }
}

async function play(scenario: Scenario): Promise<Golden> {
  const simClock = createFakeClock(T0);
  const sim = await startSimulator({ ...scenario.simulator, apiKeys: [SIM_KEY], clock: simClock });
  const dir = mkdtempSync(join(tmpdir(), `bulk-extract-golden-${scenario.name}-`));
  dirs.push(dir);
  const duck = await openDuck();
  try {
    const out = join(dir, 'out');
    const normalise = new Normaliser(dir, new URL(sim.baseUrl).origin);
    const output = { formats: scenario.formats, shard: { maxRows: scenario.maxRows } };
    const config = loadJob(dir, { baseUrl: sim.baseUrl, out, streams: scenario.streams(sim), output });
    const job = join(dir, 'job.yaml');
    const clock = createFakeClock(T0);
    const steps: Step[] = [];
    const dryRun = async (label: string) => {
      const text = await normalise.during(label, () => cli(['run', '--config', job, '--dry-run']));
      steps.push({ step: label, ...textOf(normalise.text(text)) });
    };
    for (let k = 1; k <= scenario.runs; k++) {
      // Run k starts at T0 + k minutes; the changes before it are made half a minute earlier.
      simClock.advance(clock.now() + 30_000 - simClock.now());
      if (k > 1) scenario.change?.(sim, k, simClock.now());
      clock.advance(60_000);
      if (k === 1) await dryRun('run --dry-run before run 1');
      await normalise.during(`run ${k}`, () => runAsCli(config, clock));
      steps.push({ step: `run ${k}`, files: await captureFolder(out, duck, normalise) });
      const status = await statusJson(config, clock.now());
      steps.push({ step: `status --json after run ${k}`, ...textOf(normalise.text(status)) });
    }
    await dryRun('run --dry-run after the last run');
    return { scenario: scenario.name, steps };
  } finally {
    duck.close();
    await sim.close();
  }
}

// The scenarios share nothing, so they run at once: each has its own simulator, folder and clocks.
describe.concurrent(`golden outputs (${UPDATE ? 'GOLDEN_UPDATE=1: rewriting' : 'compared with'} test/fixtures/golden/)`, () => {
  it.each(SCENARIOS.map((scenario) => [scenario.name, scenario] as const))('%s: byte for byte as kept', async (_name, scenario) => {
    const differences = checkGolden(await play(scenario));
    const where = `test/fixtures/golden/${scenario.name}.json`;
    expect(differences.length, `differs from ${where}:\n\n${differences.join('\n\n')}\n`).toBe(0);
  });
});
