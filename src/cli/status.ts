import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { parseCheckpoint, type StreamState } from '../export/checkpoint.js';
import { readShardedRun } from '../export/finalize.js';
import { streamName } from '../export/plan.js';
import { CHECKPOINT_FILE, LATEST_FILE, LOCK_FILE, MANIFEST_FILE } from '../export/layout.js';
import { inspectLock } from '../export/lock.js';
import type { Manifest } from '../export/manifest.js';
import { Mirror } from '../export/mirror.js';
import { openStore, outputPaths } from '../export/output-target.js';
import { sealedRuns } from '../export/seal-run.js';
import { silentLogger } from '../log.js';
import type { OutputStore } from '../output/store.js';
import { EXIT } from './exit-codes.js';
import { withUsage } from './parse-flags.js';
import { duration } from './progress.js';

export const STATUS_USAGE = `Usage: bulk-extract status --config FILE [--json]
       bulk-extract status --out DIR [--json]

Shows the progress recorded in an output folder's checkpoint, without contacting the platform: per
stream its mode and window (snapshots: the latest complete one), per partition rows, shards, and
whether it is done, not started, or how long ago its cursor was saved; whether a run is running.
With --out, no job file is needed (an s3:// output needs --config).
`;

const FLAGS = {
  config: { type: 'string', short: 'c' },
  out: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h' },
} as const;

export interface PartStatus {
  stream: string;
  partition: string;
  rows: number;
  shards: number;
  done: boolean;
  /** Never fetched: no cursor saved, nothing committed. */
  started: boolean;
  /** Seconds since the partition's cursor was last saved. */
  cursorAgeSeconds: number;
}

/** Where the output is: a folder, or the staging folder of an s3:// output and its store. */
interface Target {
  outDir: string;
  checkpointPath: string;
  store: OutputStore | undefined;
  /** The job's streams, when a job file was given. */
  jobStreams: string[];
}

async function target(values: { config?: string | undefined; out?: string | undefined }): Promise<Target> {
  if (values.config === undefined) {
    if (values.out === undefined) throw new UsageError(`--config FILE or --out DIR is required.\n\n${STATUS_USAGE}`);
    const outDir = resolve(values.out);
    return { outDir, checkpointPath: join(outDir, CHECKPOINT_FILE), store: undefined, jobStreams: [] };
  }
  const config = loadConfig(values.config, process.env, { out: values.out });
  const paths = outputPaths(config);
  const jobStreams = config.streams.map(streamName);
  // An s3:// output: the store has the checkpoint and manifest (the staging folder may be stale).
  return { ...paths, store: paths.s3 ? await openStore(config, silentLogger) : undefined, jobStreams };
}

export async function runStatus(argv: string[]): Promise<number> {
  const { values } = withUsage(STATUS_USAGE, () => parseArgs({ args: argv, strict: true, options: FLAGS }));
  if (values.help) {
    console.log(STATUS_USAGE);
    return EXIT.OK;
  }
  const { outDir: localDir, checkpointPath, store, jobStreams } = await target(values);
  const outDir = store?.location ?? localDir;
  const readText = (name: string) => (store === undefined ? readFile(join(localDir, name), 'utf8').catch(() => undefined) : store.getText(name));
  try {
    const text = store === undefined ? await readFile(checkpointPath, 'utf8').catch(() => undefined) : await store.getText(CHECKPOINT_FILE);
    if (text === undefined) {
      const where = store === undefined ? checkpointPath : `${outDir}/${CHECKPOINT_FILE}`;
      console.log(`No checkpoint at ${where}: the job has not run yet (into ${outDir}).`);
      return EXIT.OK;
    }
    const manifestText = await readText(MANIFEST_FILE);
    // During a sharded run the folder's checkpoint is where it started: the shards have the progress.
    const sharded =
      store === undefined ? await readShardedRun(localDir, silentLogger, new Date().toISOString()) : undefined;
    const checkpoint = sharded?.checkpoint ?? parseCheckpoint(text, checkpointPath);
    const manifest = parseManifest(manifestText);
    const lock = await inspectLock(join(localDir, LOCK_FILE));
    const runner = lock.state === 'held' && lock.alive ? lock.owner : undefined;
    const recorded = sharded === undefined ? (manifest?.state ?? 'unknown') : 'running';
    // A manifest left 'running' by a process that is gone: stopped, not running.
    const state = recorded === 'running' && sharded === undefined && runner === undefined ? 'stopped' : recorded;
    const now = Date.now();
    const parts: PartStatus[] = Object.entries(checkpoint.streams).flatMap(([stream, s]) =>
      Object.entries(s.parts).map(([m, part]) => ({
        stream,
        partition: `${m}/${s.partitions}`,
        rows: part.rows,
        shards: part.nextSeq,
        done: part.done,
        started: part.done || part.cursor !== null || part.nextSeq > 0,
        cursorAgeSeconds: Math.round((now - Date.parse(part.updatedAt)) / 1000),
      })),
    );
    const streams = [];
    for (const [stream, s] of Object.entries(checkpoint.streams)) {
      streams.push(await streamStatus(stream, s, localDir, store));
    }
    if (values.json) {
      const shards = sharded === undefined ? {} : { shards: sharded.shards };
      const running = runner === undefined ? {} : { runner };
      console.log(JSON.stringify({ outDir, state, ...running, streams, parts, ...shards }));
      return EXIT.OK;
    }
    if (sharded === undefined) {
      const who = runner === undefined ? '' : ` (pid ${runner.pid} on ${runner.host}, since ${runner.startedAt})`;
      const said = state === 'stopped' ? 'stopped before it finished (killed?); run it again to resume' : `${state}${who}`;
      console.log(`${outDir}: run ${said}`);
    } else {
      const describe = (s: { index: number; started: boolean; complete: boolean }) =>
        `${s.index} ${s.complete ? 'complete' : s.started ? 'not complete' : 'not started'}`;
      console.log(`${outDir}: sharded run in ${sharded.plan.count} shards since ${sharded.plan.createdAt}: ${sharded.shards.map(describe).join(', ')}`);
    }
    for (const s of streams) console.log(`  ${s.stream}: ${describeStream(s)}`);
    for (const name of jobStreams.filter((n) => checkpoint.streams[n] === undefined)) {
      console.log(`  ${name}: not started (the job has it; no run has read it yet)`);
    }
    for (const part of parts) {
      const progress = part.done ? 'done' : part.started ? `cursor saved ${duration(part.cursorAgeSeconds)} ago` : 'not started';
      console.log(
        `  ${part.stream.padEnd(16)} ${part.partition.padStart(6)}  ${part.rows.toLocaleString('en-US').padStart(13)} rows  ${String(part.shards).padStart(5)} shards  ${progress}`,
      );
    }
    return EXIT.OK;
  } finally {
    await store?.close();
  }
}

interface StreamStatus {
  stream: string;
  mode: string;
  run: string | null;
  /** lastUpdatedTime read by the current run: [from, until), epoch ms (from null: the beginning). */
  window: StreamState['window'];
  watermark: number | null;
  /** snapshot: the newest sealed run (its folder name), and how many sealed runs the folder keeps. */
  latest?: string | null;
  snapshots?: number;
}

async function streamStatus(
  stream: string,
  state: StreamState,
  outDir: string,
  store: OutputStore | undefined,
): Promise<StreamStatus> {
  const base = { stream, mode: state.mode, run: state.run, window: state.window, watermark: state.watermark };
  if (state.mode !== 'snapshot') return base;
  const latestText =
    store === undefined ? await readFile(join(outDir, stream, LATEST_FILE), 'utf8').catch(() => undefined) : await store.getText(`${stream}/${LATEST_FILE}`);
  const sealed = await sealedRuns(outDir, stream, store === undefined ? undefined : new Mirror(outDir, store));
  return { ...base, latest: latestText?.trim() ?? null, snapshots: sealed.length };
}

function describeStream(s: StreamStatus): string {
  const iso = (ms: number | null) => (ms === null ? 'the beginning' : new Date(ms).toISOString());
  const window = s.window === null ? 'no window' : `lastUpdatedTime from ${iso(s.window.from)} to before ${iso(s.window.until)}`;
  const run = s.run === null ? '' : `, run=${s.run}`;
  const latest = s.mode !== 'snapshot' ? '' : `; latest complete snapshot: ${s.latest ?? 'none yet'} (${s.snapshots ?? 0} kept)`;
  return `${s.mode}${run}, ${window}${latest}`;
}

function parseManifest(text: string | undefined): Manifest | undefined {
  try {
    return text === undefined ? undefined : (JSON.parse(text) as Manifest);
  } catch {
    return undefined;
  }
}
