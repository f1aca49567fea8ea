import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { parseCheckpoint } from '../export/checkpoint.js';
import { CHECKPOINT_FILE, MANIFEST_FILE } from '../export/layout.js';
import type { Manifest } from '../export/manifest.js';
import { readShardedRun } from '../export/finalize.js';
import { openStore, outputPaths } from '../export/output-target.js';
import { silentLogger } from '../log.js';
import { EXIT } from './exit-codes.js';
import { withUsage } from './parse-flags.js';
import { duration } from './progress.js';

export const STATUS_USAGE = `Usage: bulk-extract status --config FILE [--json]

Shows the progress recorded in the job's checkpoint, without contacting the platform: per stream and
partition, rows, shards, and whether it is done or how long ago its cursor was saved.
`;

const FLAGS = {
  config: { type: 'string', short: 'c' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h' },
} as const;

export interface PartStatus {
  stream: string;
  partition: string;
  rows: number;
  shards: number;
  done: boolean;
  /** Seconds since the partition's cursor was last saved. */
  cursorAgeSeconds: number;
}

const nowIso = () => new Date().toISOString();

export async function runStatus(argv: string[]): Promise<number> {
  const { values } = withUsage(STATUS_USAGE, () => parseArgs({ args: argv, strict: true, options: FLAGS }));
  if (values.help) {
    console.log(STATUS_USAGE);
    return EXIT.OK;
  }
  if (values.config === undefined) throw new UsageError(`--config FILE is required.\n\n${STATUS_USAGE}`);
  const config = loadConfig(values.config);
  const paths = outputPaths(config);
  const { checkpointPath } = paths;
  // An s3:// output: the store has the checkpoint and manifest (the staging folder may be stale).
  const store = paths.s3 ? await openStore(config, silentLogger) : undefined;
  const outDir = store?.location ?? paths.outDir;
  const readText = (name: string, path: string) =>
    store === undefined ? readFile(path, 'utf8').catch(() => undefined) : store.getText(name);
  let text: string | undefined;
  let manifestText: string | undefined;
  try {
    text = await readText(CHECKPOINT_FILE, checkpointPath);
    manifestText = await readText(MANIFEST_FILE, join(paths.outDir, MANIFEST_FILE));
  } finally {
    await store?.close();
  }
  if (text === undefined) {
    const where = store === undefined ? checkpointPath : `${outDir}/${CHECKPOINT_FILE}`;
    console.log(`No checkpoint at ${where}: the job has not run yet (into ${outDir}).`);
    return EXIT.OK;
  }
  // During a sharded run the folder's checkpoint is where it started: the shards have the progress.
  const sharded = store === undefined ? await readShardedRun(outDir, silentLogger, nowIso()) : undefined;
  const checkpoint = sharded?.checkpoint ?? parseCheckpoint(text, checkpointPath);
  let manifest: Manifest | undefined;
  try {
    manifest = manifestText === undefined ? undefined : (JSON.parse(manifestText) as Manifest);
  } catch {
    manifest = undefined;
  }
  const now = Date.now();
  const parts: PartStatus[] = Object.entries(checkpoint.streams).flatMap(([stream, state]) =>
    Object.entries(state.parts).map(([m, part]) => ({
      stream,
      partition: `${m}/${state.partitions}`,
      rows: part.rows,
      shards: part.nextSeq,
      done: part.done,
      cursorAgeSeconds: Math.round((now - Date.parse(part.updatedAt)) / 1000),
    })),
  );
  const streams = Object.entries(checkpoint.streams).map(([stream, state]) => ({
    stream,
    mode: state.mode,
    run: state.run,
    /** lastUpdatedTime read by the current run: [from, until), epoch ms (from null: the beginning). */
    window: state.window,
    watermark: state.watermark,
  }));
  if (values.json) {
    const state = sharded === undefined ? (manifest?.state ?? 'unknown') : 'running';
    const shards = sharded === undefined ? {} : { shards: sharded.shards };
    console.log(JSON.stringify({ outDir, state, streams, parts, ...shards }));
    return EXIT.OK;
  }
  if (sharded === undefined) {
    console.log(`${outDir}: run ${manifest?.state ?? 'state unknown (no manifest)'}`);
  } else {
    const describe = (s: { index: number; started: boolean; complete: boolean }) =>
      `${s.index} ${s.complete ? 'complete' : s.started ? 'not complete' : 'not started'}`;
    console.log(
      `${outDir}: sharded run in ${sharded.plan.count} shards since ${sharded.plan.createdAt}: ${sharded.shards.map(describe).join(', ')}`,
    );
  }
  for (const s of streams) {
    const iso = (ms: number | null) => (ms === null ? 'the beginning' : new Date(ms).toISOString());
    const window = s.window === null ? 'no window' : `lastUpdatedTime from ${iso(s.window.from)} to before ${iso(s.window.until)}`;
    const run = s.run === null ? '' : `, run=${s.run}`;
    console.log(`  ${s.stream}: ${s.mode}${run}, ${window}`);
  }
  for (const part of parts) {
    const progress = part.done ? 'done' : `cursor saved ${duration(part.cursorAgeSeconds)} ago`;
    console.log(
      `  ${part.stream.padEnd(16)} ${part.partition.padStart(6)}  ${part.rows.toLocaleString('en-US').padStart(13)} rows  ${String(part.shards).padStart(5)} shards  ${progress}`,
    );
  }
  return EXIT.OK;
}
