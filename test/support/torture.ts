import { join } from 'node:path';
import { expect } from 'vitest';
import type { Format, Resource } from '../../src/config/job-schema.js';
import { resourceSpec } from '../../src/resources/index.js';
import type { FaultOptionsInput, InstanceCounts, Simulator } from '../../src/simulator/index.js';
import { openDuck, parquetItems } from './export-duckdb.js';
import { ndjsonRows } from './ndjson-rows.js';
import {
  describeExit,
  type Exit,
  expectedIds,
  expectExactOutput,
  newJob,
  newSimulator,
  runCliWith,
  seededRandom,
  spawnCli,
  type StreamSpec,
} from './resume-harness.js';
import { type MisbehaviourRates, startMisbehavingProxy } from './misbehaving-proxy.js';
import { expectEveryInstance, expectedInstanceIds, expectNoWrongInstance, type InstancesStreamSpec, queriesOf } from './torture-instances.js';
import { TableWatch } from './torture-delta.js';
import { expectEveryPoint, expectNoWrongPoint, type PointsStreamSpec } from './torture-points.js';

const KEY = 'torture-test-key-0001';
const FAILPOINTS = [
  'after-append',
  'after-encode-chunk',
  'after-shard-rename',
  'after-manifest-write',
  'after-checkpoint-write',
] as const;
/** The steps of committing a Delta table's version (state/delta-table.ts; its temporary: util/durable-file.ts). */
const TABLE_POINTS = ['before-table-commit', 'after-create-temp', 'after-table-commit'] as const;

export interface TortureOptions {
  /** SIGKILLs to land in all. */
  kills: number;
  seed: number;
  /** Items of each collection the simulator serves, and its datapoints in all. */
  sizes: Partial<Record<Resource | 'datapoints', number>>;
  /** Data-model instances the simulator serves, by kind (its defaults for the kinds not given). */
  instances?: Partial<InstanceCounts>;
  /**
   * Collection streams; datapoints streams (checked point by point, support/torture-points.ts);
   * instances streams (checked instance by instance, support/torture-instances.ts).
   */
  streams: TortureStream[];
  formats: Format[];
  ndjsonGzip?: boolean;
  /** output.shard.maxRows (default 2000, newJob's). */
  maxRows?: number;
  faults: FaultOptionsInput;
  /**
   * output.table: `delta` makes every stream a Delta table (formats [parquet]; collection streams
   * only), checked version by version after every run (support/torture-delta.ts). Default files.
   */
  table?: 'files' | 'delta';
  /**
   * Scheduled streams (mode incremental or snapshot): each round after the first goes on from the
   * last, `between` changing the source before it, instead of starting over with --fresh; at least
   * `rounds` rounds are run, those after the kills are used up without one.
   */
  schedule?: { rounds: number; between(sim: Simulator, random: () => number): void };
  /**
   * A platform that misbehaves besides the faults: the CLI reads through a proxy that breaks
   * answers at these rates (support/misbehaving-proxy.ts). A run it fails must exit 1 with one of
   * `refusals` and leave no wrong row committed; the next run resumes.
   */
  misbehave?: { rates: MisbehaviourRates; refusals: readonly string[] };
}

export type TortureStream = StreamSpec | PointsStreamSpec | InstancesStreamSpec;

export interface TortureReport {
  kills: number;
  /**
   * Kills by where they landed: a failpoint, `external` (a SIGKILL sent at the k-th log line) or
   * `sigterm` (a SIGTERM sent so, which the run answers by committing what is complete and exit 130).
   */
  byPoint: Record<string, number>;
  /** Exports driven to completion (each after its share of kills), all verified exact. */
  rounds: number;
  runs: number;
  /**
   * Retries the CLI logged, by request and reason (`POST /timeseries/data/list HTTP 429`,
   * `... E_NETWORK` for a reset, `... E_INVALID_JSON` for a truncated body): which faults it met where.
   */
  retries: Record<string, number>;
  /** Runs that failed on a misbehaving answer, by the error code they stopped with. */
  refused: Record<string, number>;
  /** The misbehaving answers the proxy sent, by kind. */
  misbehaved: Record<string, number>;
  /** Delta tables: the latest version of each, by stream. */
  versions?: Record<string, number>;
  seconds: number;
}

/** Refused runs in a row after which a scenario is said never to finish: its rates are too high. */
const MAX_REFUSED_IN_A_ROW = 40;

/**
 * Crash torture: runs the real CLI against the simulator (faults on) and kills it with SIGKILL at
 * seeded moments, a failpoint at a random count or an outside kill at a random log line, then
 * resumes, again and again. When an export completes it is checked row by row against the
 * simulator's data, and a new round starts (`--fresh`, or the next scheduled run) until `kills`
 * kills have landed. Delta tables are also checked after every run, a killed one too.
 */
export async function torture(options: TortureOptions): Promise<TortureReport> {
  const started = performance.now();
  const random = seededRandom(options.seed);
  const sim = await newSimulator({
    ...options.sizes,
    ...(options.instances === undefined ? {} : { instances: options.instances }),
    seed: options.seed,
    apiKeys: [KEY],
    faults: options.faults,
  });
  const proxy =
    options.misbehave === undefined
      ? undefined
      : await startMisbehavingProxy({
          target: sim.baseUrl,
          rates: options.misbehave.rates,
          random: seededRandom(options.seed + 1),
        });
  try {
    return await tortureThrough(sim, proxy?.baseUrl ?? sim.baseUrl, random, options, started, proxy?.sent ?? {});
  } finally {
    await proxy?.close();
  }
}

async function tortureThrough(
  sim: Simulator,
  baseUrl: string,
  random: () => number,
  options: TortureOptions,
  started: number,
  misbehaved: Record<string, number>,
): Promise<TortureReport> {
  // The job file holds each stream as given (jobYaml writes them as they are), datapoints and instances ones too.
  const job = newJob(
    sim,
    options.streams as StreamSpec[],
    {
      baseUrl,
      formats: options.formats,
      ndjsonCompression: options.ndjsonGzip === true ? 'gzip' : 'none',
      ...(options.maxRows === undefined ? {} : { maxRows: options.maxRows }),
      ...(options.table === undefined ? {} : { table: options.table }),
    },
    'torture',
  );
  const tables = options.table === 'delta' ? new TableWatch(job.out, options.streams.map(asCollection)) : undefined;
  const report: TortureReport = {
    kills: 0,
    byPoint: {},
    rounds: 0,
    runs: 0,
    retries: {},
    refused: {},
    misbehaved,
    seconds: 0,
  };
  let fresh = false;
  let refusedInARow = 0;
  /** A round completed: the output checked, then the next round is a --fresh export, or follows the schedule. */
  const roundDone = async () => {
    await expectEveryRow(sim, job.out, options, tables);
    report.rounds++;
    if (options.schedule === undefined) fresh = true;
    else options.schedule.between(sim, random);
  };
  while (report.kills < options.kills) {
    const args = ['run', '--config', job.file, ...(fresh ? ['--fresh'] : [])];
    fresh = false;
    let exit: Exit;
    let point: string;
    const failpoint = failpointOf(random, tables === undefined ? 0 : options.streams.length);
    if (failpoint !== undefined) {
      point = failpoint.point;
      exit = await runCliWith([...args, '--log-level', 'warn'], {
        cwd: job.dir,
        env: { SIM_KEY: KEY, BULK_EXTRACT_CRASH_AT: failpoint.at },
      });
    } else {
      // From outside, at a log line: SIGKILL, or SIGTERM (Ctrl-C, a scheduler: the run commits what is complete).
      const signal = random() < 0.5 ? 'SIGKILL' : 'SIGTERM';
      point = signal === 'SIGKILL' ? 'external' : 'sigterm';
      const line = 1 + Math.floor(random() * 40);
      const cli = spawnCli([...args, '--log-level', 'debug'], { cwd: job.dir, env: { SIM_KEY: KEY } });
      cli.onStderrLine((_, index) => {
        if (index === line) cli.child.kill(signal);
      });
      exit = await cli.done;
    }
    report.runs++;
    countRetries(exit.stderr, report.retries);
    await tables?.afterRun();
    // A run stopped by SIGTERM exits 130 once it has committed what was complete; before it
    // listens for the signal (as it starts), the signal ends it as a kill would.
    const stopped = point === 'sigterm' && (exit.code === 130 || exit.signal === 'SIGTERM');
    if (exit.signal === 'SIGKILL' || stopped) {
      report.kills++;
      report.byPoint[point] = (report.byPoint[point] ?? 0) + 1;
      continue;
    }
    const refusal = refusalOf(exit, options);
    if (refusal !== undefined) {
      report.refused[refusal] = (report.refused[refusal] ?? 0) + 1;
      expect(++refusedInARow, `${refusedInARow} runs in a row refused: the export never finishes`).toBeLessThan(MAX_REFUSED_IN_A_ROW);
      await expectNoWrongRow(sim, job.out, options);
      continue;
    }
    refusedInARow = 0;
    expect(exit.code, `a run that was not killed must complete; ${describeExit(exit)}`).toBe(0);
    await roundDone();
  }
  // The last round, unkilled (and those a schedule still asks for).
  do {
    for (;;) {
      const last = await runCliWith(['run', '--config', job.file, '--log-level', 'warn'], {
        cwd: job.dir,
        env: { SIM_KEY: KEY },
      });
      report.runs++;
      countRetries(last.stderr, report.retries);
      await tables?.afterRun();
      const refusal = refusalOf(last, options);
      if (refusal === undefined) {
        expect(last.code, describeExit(last)).toBe(0);
        break;
      }
      report.refused[refusal] = (report.refused[refusal] ?? 0) + 1;
      expect(++refusedInARow, `${refusedInARow} runs in a row refused: the export never finishes`).toBeLessThan(MAX_REFUSED_IN_A_ROW);
      await expectNoWrongRow(sim, job.out, options);
    }
    await roundDone();
  } while (report.rounds < (options.schedule?.rounds ?? 0));
  if (tables !== undefined) report.versions = tables.latestVersions();
  report.seconds = Math.round((performance.now() - started) / 1000);
  return report;
}

/**
 * Where the next kill lands: a crash point and the hit that fires it, or undefined for a kill from
 * outside at a log line. The torture picks kill moments by crash point and count (and by log line),
 * never by time. Three quarters of the kills: one of FAILPOINTS on its 1st to 6th hit, as a run
 * reaches each many times. With `tables` Delta tables, half of all kills land first in a table's
 * commit: one of TABLE_POINTS on its 1st to `tables`-th hit, as a run reaches each once per version
 * it commits, about one per table; a larger count would mostly let the run finish unkilled.
 */
function failpointOf(random: () => number, tables: number): { point: string; at: string } | undefined {
  if (tables > 0 && random() < 0.5) {
    const point = TABLE_POINTS[Math.floor(random() * TABLE_POINTS.length)] ?? 'after-table-commit';
    return { point, at: `${point}:${1 + Math.floor(random() * tables)}` };
  }
  if (random() >= 0.75) return undefined;
  const point = FAILPOINTS[Math.floor(random() * FAILPOINTS.length)] ?? 'after-append';
  return { point, at: `${point}:${1 + Math.floor(random() * 6)}` };
}

/**
 * The output equals the simulator's data: the exact-output checks (of the whole output, and of
 * each collection and instances stream), then every row of every format; every point of a
 * datapoints stream; every instance of an instances stream. Delta tables: their latest versions,
 * row for row, and their sealed runs (TableWatch.expectRound).
 */
async function expectEveryRow(
  sim: Simulator,
  out: string,
  options: TortureOptions,
  tables: TableWatch | undefined,
): Promise<void> {
  if (tables !== undefined) return tables.expectRound((resource) => itemsByKey(sim, resource));
  const streams = options.streams.filter(isCollection);
  const instances = options.streams.filter((stream) => stream.resource === 'instances');
  await expectExactOutput(out, [
    ...streams.map((stream) => ({
      name: stream.name ?? stream.resource,
      resource: stream.resource,
      partitions: stream.partitions ?? 10,
      formats: options.formats,
      ids: expectedIds(sim, stream.resource),
    })),
    ...instances.map((stream) => ({
      name: stream.name,
      resource: stream.resource,
      partitions: queriesOf(stream),
      formats: options.formats,
      ids: expectedInstanceIds(sim, stream),
    })),
  ]);
  for (const stream of options.streams) {
    if (stream.resource === 'datapoints') await expectEveryPoint(sim, out, stream, options.formats);
    if (stream.resource === 'instances') await expectEveryInstance(sim, out, stream, options.formats);
  }
  const duck = await openDuck();
  try {
    for (const stream of streams) {
      const name = stream.name ?? stream.resource;
      const expected = itemsByKey(sim, stream.resource);
      const key = resourceSpec(stream.resource).key;
      const expectEqual = (rows: Record<string, unknown>[]) => {
        expect(rows.length).toBe(expected.size);
        for (const row of rows) expect(row, `${name} ${key} ${String(row[key])}`).toEqual(expected.get(row[key]));
      };
      if (options.formats.includes('ndjson')) expectEqual(ndjsonRows(join(out, name)));
      if (options.formats.includes('parquet')) {
        expectEqual(await parquetItems(duck, stream.resource, `${join(out, name)}/*/*.parquet`));
      }
    }
  } finally {
    duck.close();
  }
}

/**
 * The error code a run stopped with on a misbehaving answer: exit 1 (the run is resumable) and one
 * of the scenario's refusals in what it printed; undefined for any other end (the caller's checks
 * then fail on it).
 */
function refusalOf(exit: Exit, options: TortureOptions): string | undefined {
  if (options.misbehave === undefined || exit.code !== 1) return undefined;
  const codes = new Set(exit.stderr.match(/\bE_[A-Z_]+\b/gu) ?? []);
  return options.misbehave.refusals.find((code) => codes.has(code));
}

/** After a refused run: what the output holds of each datapoints and instances stream is right, row for row. */
async function expectNoWrongRow(sim: Simulator, out: string, options: TortureOptions): Promise<void> {
  for (const stream of options.streams) {
    if (stream.resource === 'datapoints') await expectNoWrongPoint(sim, out, stream, options.formats);
    if (stream.resource === 'instances') await expectNoWrongInstance(sim, out, stream, options.formats);
  }
}

function isCollection(stream: TortureStream): stream is StreamSpec {
  return stream.resource !== 'datapoints' && stream.resource !== 'instances';
}

/** A stream of a Delta torture: collection streams only (support/torture-delta.ts checks those). */
function asCollection(stream: TortureStream): StreamSpec {
  if (!isCollection(stream)) throw new Error(`the torture checks Delta tables of collections only, not ${stream.resource}`);
  return stream;
}

/** Every item of a collection by its key (`id`, or `externalId` for relationships). */
function itemsByKey(sim: Simulator, resource: Resource): Map<unknown, Record<string, unknown>> {
  const set: { count: number; item(index: number): object } = sim.dataset[resource];
  const key = resourceSpec(resource).key;
  const items = new Map<unknown, Record<string, unknown>>();
  for (let index = 0; index < set.count; index++) {
    const item = { ...set.item(index) } as Record<string, unknown>;
    items.set(item[key], item);
  }
  return items;
}

/** Adds the retries logged in `stderr` (JSON lines; a line cut short by the kill is skipped) to `into`. */
function countRetries(stderr: string, into: Record<string, number>): void {
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('{')) continue;
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    const { method, path, reason, attempt } = record;
    if (typeof path !== 'string' || typeof reason !== 'string' || typeof attempt !== 'number') continue;
    const route = path.replace(/^\/api\/v1\/projects\/[^/]+/, '').split('?')[0] ?? '';
    const key = `${String(method)} ${route} ${reason}`;
    into[key] = (into[key] ?? 0) + 1;
  }
}
