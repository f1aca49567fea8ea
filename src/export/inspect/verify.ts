import type { JobConfig } from '../../config/load-config.js';
import { BulkExtractError, CheckpointError } from '../../errors.js';
import { type Logger, silentLogger } from '../../log.js';
import type { OutputStore } from '../../output/index.js';
import { INSTANCE_COLUMNS, shapeFromParams } from '../../resources/index.js';
import { type Checkpoint, CHECKPOINT_FILE, isOwnedKey, LATEST_FILE, type Manifest, MANIFEST_FILE, type ManifestFile, openOutput, outputAt, parseCheckpoint, parseStateFile, readManifestFile, RUN_PREFIX, type WindowManifest, windowManifestSchema, shardSeq, streamRecord, SUCCESS_FILE } from '../state/index.js';
import { checkShard, checkTable, joinedKey, KeyCheck, type KeyReport, PointRowCheck, recordProblems, type RowReader, type TableReport } from '../check/index.js';

/** The folder is not a bulk-extract output (no readable manifest). */
export class NotAnOutputError extends BulkExtractError {
  readonly code = 'E_NOT_OUTPUT';
}

export interface VerifyReport {
  state: Manifest['state'];
  success: boolean;
  /** Files and rows per format (each format holds every row once). */
  formats: Partial<Record<ManifestFile['format'], { files: number; rows: number }>>;
  /** Whether the checkpoint was found and compared with the manifest. */
  checkpointChecked: boolean;
  /** Rows whose key was checked to be unique in its stream (in its run, for incremental and snapshot streams). */
  keysChecked: number;
  /** Rows of change-feed runs (incremental instances, a subscription) whose key was read: a key may repeat. */
  changeRows: number;
  /** The streams that are Delta tables: each one's latest version, as its log replays. */
  tables?: Record<string, TableReport>;
  problems: string[];
}

export interface VerifyOptions {
  /** The checkpoint's key in the store. Default `_checkpoint.json`. */
  checkpointKey?: string;
  /** Check that every row's key is unique in its stream (in its run). Default true. */
  keys?: boolean;
}

/** Verifies the output folder `outDir` (see verifyStore). */
export async function verifyOutput(outDir: string, options: VerifyOptions = {}): Promise<VerifyReport> {
  const { store } = outputAt(outDir, silentLogger);
  try {
    return await verifyStore(store, options);
  } finally {
    await store.close();
  }
}

/** Verifies a job's output, a folder or a bucket, with its checkpoint where the job keeps it. */
export async function verifyJob(
  config: JobConfig,
  logger: Logger = silentLogger,
  options: Omit<VerifyOptions, 'checkpointKey'> = {},
): Promise<VerifyReport> {
  const { store, checkpointKey } = await openOutput(config, logger);
  try {
    return await verifyStore(store, { ...options, checkpointKey });
  } finally {
    await store.close();
  }
}

/**
 * Reads back every shard the manifest lists, through the store: present, same size, same sha256,
 * same row count (the Parquet footer, or NDJSON lines). The shards of completed incremental and
 * snapshot runs are listed by their run folder's `_manifest.json`. Also problems: shard files no
 * manifest lists, a `_LATEST` that names no sealed run, the manifest's row counts against its
 * shards', formats of one shard that disagree, a checkpoint that disagrees with the manifest, and
 * a key (`id`, or `externalId`) that two rows of a stream's run share (but for a run of an
 * incremental instances stream, a change feed, where an instance changed twice appears twice), and
 * a stream's Delta table that disagrees with its sealed runs (checkTable).
 */
export async function verifyStore(store: OutputStore, options: VerifyOptions = {}): Promise<VerifyReport> {
  const manifest = await readManifest(store);
  const problems: string[] = [];
  const streams = Object.keys(manifest.streams);
  const runs = await runManifests(store, streams, problems);
  const checkpoint = await readCheckpoint(store, options.checkpointKey ?? CHECKPOINT_FILE, problems);
  problems.push(...recordProblems(manifest, runs, checkpoint));

  const groups = shardGroups(manifest, runs);
  let keysChecked = 0;
  let changeRows = 0;
  for (const group of groups) {
    const keyFormat = group.files.some((file) => file.format === 'parquet') ? 'parquet' : 'ndjson';
    const keys = options.keys === false ? undefined : new KeyCheck(group.rows);
    const points = group.points ? pointCheck(group, manifest, runs, checkpoint) : undefined;
    try {
      for (const file of group.files) {
        const reader = rowReader(group, file, file.format === keyFormat ? keys : undefined, points);
        problems.push(...(await checkShard(store, file, reader)));
      }
      problems.push(...(points?.problems() ?? []));
      if (keys !== undefined) {
        const report = keys.finish();
        if (group.feed) changeRows += report.keys;
        else keysChecked += report.keys;
        problems.push(...keyProblems(group, report));
      }
    } finally {
      await keys?.close();
    }
  }

  for (const stream of streams) problems.push(...(await checkLatest(store, stream)));
  const tables: Record<string, TableReport> = {};
  for (const stream of streams) {
    const expected = checkpoint?.streams[stream]?.table === 'delta';
    const found = await checkTable(store, stream, manifest.streams[stream]?.mode, runs, expected);
    problems.push(...found.problems);
    if (found.table !== undefined) tables[stream] = found.table;
  }
  const listed = new Set(groups.flatMap((group) => group.files.map((file) => file.path)));
  for (const key of await shardKeys(store, streams)) {
    if (!listed.has(key)) problems.push(`${key}: a shard file the manifest does not list`);
  }
  const success = (await store.size(SUCCESS_FILE)) !== undefined;
  if (success && manifest.state !== 'complete') problems.push(`_SUCCESS exists but the manifest says '${manifest.state}'`);
  const formats: VerifyReport['formats'] = {};
  for (const file of groups.flatMap((group) => group.files)) {
    const entry = (formats[file.format] ??= { files: 0, rows: 0 });
    entry.files++;
    entry.rows += file.rows;
  }
  const checkpointChecked = checkpoint !== undefined;
  const { state } = manifest;
  const report: VerifyReport = { state, success, formats, checkpointChecked, keysChecked, changeRows, problems };
  return Object.keys(tables).length > 0 ? { ...report, tables } : report;
}

/** The shards of one stream's run, whose keys must be unique among them. */
interface ShardGroup {
  stream: string;
  run: string | undefined;
  /** What identifies a row, as messages name it. */
  key: string;
  /** The fields a row's key is read from (the stream record's keyFields, or `key` itself). */
  keyFields: readonly string[];
  /** Datapoints: a row is identified by its series and timestamp. */
  points: boolean;
  /**
   * A run of an incremental stream read from a change feed (instances' sync, a subscription): an
   * instance or a point changed again while the run read shows up once per change, so its key may repeat.
   */
  feed: boolean;
  /** Rows the records count (of one format): sizes the key check. */
  rows: number;
  files: ManifestFile[];
}

/** The files of the output by stream and run: the current runs' (the manifest) and the sealed runs'. */
function shardGroups(manifest: Manifest, runs: readonly WindowManifest[]): ShardGroup[] {
  const groups = new Map<string, ShardGroup>();
  const add = (file: ManifestFile) => {
    const id = `${file.stream}/${file.run ?? ''}`;
    let group = groups.get(id);
    if (group === undefined) {
      const sealed = runs.find((run) => run.stream === file.stream);
      const resource = manifest.streams[file.stream]?.resource ?? sealed?.resource;
      const record = resource === undefined ? undefined : streamRecord(resource);
      const points = record?.rows === 'points';
      const incremental = manifest.streams[file.stream]?.mode === 'incremental' || sealed?.sync !== undefined;
      const feed = record?.feed === true && incremental;
      const key = resource === undefined || record === undefined ? 'id' : record.keyName(resource);
      const keyFields = resource === undefined || record === undefined ? [key] : record.keyFields(resource);
      group = { stream: file.stream, run: file.run, key, keyFields, points, feed, rows: 0, files: [] };
      groups.set(id, group);
    }
    // A path listed twice (the current run and its own sealed manifest) is read once.
    if (group.files.some((known) => known.path === file.path)) return;
    group.files.push(file);
  };
  for (const file of manifest.files) add(file);
  for (const run of runs) for (const file of run.files) add(file);
  for (const group of groups.values()) {
    const format = group.files[0]?.format;
    group.rows = group.files.filter((file) => file.format === format).reduce((sum, file) => sum + file.rows, 0);
  }
  return [...groups.values()];
}

/** A datapoint's key: its series and time; the series is `timeseriesId` in Parquet, `id` in NDJSON. */
const POINT_KEY = { parquet: ['timeseriesId', 'timestamp'], ndjson: ['id', 'timestamp'] } as const;

/**
 * What reading `file` back hands its rows to: the key check (`keys`, in the format whose keys are
 * checked) and, for a datapoints stream, the check of its points (in every format).
 */
function rowReader(
  group: ShardGroup,
  file: ManifestFile,
  keys: KeyCheck | undefined,
  points: PointRowCheck | undefined,
): RowReader | undefined {
  if (points !== undefined) {
    const check = points.reader(file);
    const [series, timestamp] = POINT_KEY[file.format];
    // The node's key is read where the rows carry it (a stream of data-model series), in both formats.
    const nodes = points.instanceColumns ? INSTANCE_COLUMNS : [];
    return {
      fields: [series, 'externalId', timestamp, ...nodes],
      row: ([id, externalId, time, space, nodeId]) => {
        keys?.add(joinedKey([id, time]));
        check(id, externalId, time, space, nodeId);
      },
    };
  }
  if (keys === undefined) return undefined;
  return { fields: group.keyFields, row: (values) => keys.add(joinedKey(values)) };
}

/**
 * The check of a datapoints stream's run: its window from the manifest that lists the run (the
 * output's, or the sealed run's own), and the series the checkpoint has in flight when the
 * checkpoint is at this run.
 */
function pointCheck(
  group: ShardGroup,
  manifest: Manifest,
  runs: readonly WindowManifest[],
  checkpoint: Checkpoint | undefined,
): PointRowCheck {
  const current = manifest.streams[group.stream];
  const atCurrent = current !== undefined && (current.run ?? undefined) === group.run;
  const sealed = runs.find((run) => run.stream === group.stream && run.run === group.run);
  const window = atCurrent ? current.pointWindow : sealed?.pointWindow;
  const state = checkpoint?.streams[group.stream];
  const inFlight = atCurrent && state !== undefined && (state.run ?? undefined) === group.run ? state : undefined;
  const params = current?.params ?? [];
  const { granularity, instanceColumns } = shapeFromParams(params);
  const timeZone = params.find(([name]) => name === 'timeZone')?.[1];
  const buckets = granularity === undefined ? undefined : { granularity, timeZone };
  return new PointRowCheck(group.stream, window, buckets, inFlight, instanceColumns === true);
}

function keyProblems(group: ShardGroup, report: KeyReport): string[] {
  const where = group.run === undefined ? group.stream : `${group.stream}/${RUN_PREFIX}${group.run}`;
  const problems: string[] = [];
  if (report.repeated > 0 && !group.feed) {
    const examples = report.examples.map(({ key, count }) => `${group.key} ${key} ${count} times`).join(', ');
    const rows = report.repeated.toLocaleString('en-US');
    problems.push(`${where}: ${rows} row(s) repeat the ${group.key} of an earlier row (${examples}): the platform sent duplicates`);
  }
  if (report.missing > 0) problems.push(`${where}: ${report.missing.toLocaleString('en-US')} row(s) without a ${group.key}`);
  return problems;
}

async function readManifest(store: OutputStore): Promise<Manifest> {
  let manifest: Manifest | undefined;
  try {
    manifest = await readManifestFile(store);
  } catch (error) {
    if (!(error instanceof CheckpointError)) throw error;
    throw new NotAnOutputError(error.message, { cause: error });
  }
  if (manifest === undefined) {
    throw new NotAnOutputError(`${store.location} has no ${MANIFEST_FILE}: it is not a bulk-extract output folder.`);
  }
  return manifest;
}

/** The checkpoint, when there is one where it is looked for; an unreadable one is a problem. */
async function readCheckpoint(store: OutputStore, key: string, problems: string[]): Promise<Checkpoint | undefined> {
  const text = await store.getText(key);
  if (text === undefined) return undefined;
  try {
    return parseCheckpoint(text, store.where(key));
  } catch (error) {
    if (!(error instanceof CheckpointError)) throw error;
    problems.push(error.message);
    return undefined;
  }
}

/** A snapshot stream's `_LATEST` must name a sealed run folder of the stream. */
async function checkLatest(store: OutputStore, stream: string): Promise<string[]> {
  const path = `${stream}/${LATEST_FILE}`;
  const text = await store.getText(path);
  if (text === undefined) return [];
  const run = text.trim();
  if (!/^run=\d{8}T\d{6}\.\d{3}Z$/.test(run)) return [`${path}: does not name a run folder (${JSON.stringify(run.slice(0, 40))})`];
  const sealed = (await store.size(`${stream}/${run}/${SUCCESS_FILE}`)) !== undefined;
  return sealed ? [] : [`${path}: names ${run}, which is not a sealed run (no ${run}/${SUCCESS_FILE})`];
}

/** The manifests of sealed runs (`<stream>/run=*\/_manifest.json`); unreadable ones are problems. */
async function runManifests(
  store: OutputStore,
  streams: readonly string[],
  problems: string[],
): Promise<WindowManifest[]> {
  const found: WindowManifest[] = [];
  for (const stream of streams) {
    for (const key of await store.list(`${stream}/${RUN_PREFIX}`)) {
      if (!isOwnedKey(key) || !key.endsWith(`/${MANIFEST_FILE}`)) continue;
      const text = await store.getText(key);
      if (text === undefined) continue;
      try {
        found.push(parseStateFile(text, key, windowManifestSchema, 'the manifest of a sealed run'));
      } catch (error) {
        problems.push(`${key}: damaged (${(error as Error).message})`);
      }
    }
  }
  return found;
}

/** Shard files under the streams' partition folders (and their runs'), as keys. */
async function shardKeys(store: OutputStore, streams: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const stream of streams) {
    for (const key of await store.list(`${stream}/`)) {
      const name = key.slice(key.lastIndexOf('/') + 1);
      if (isOwnedKey(key) && shardSeq(name) !== undefined) found.push(key);
    }
  }
  return found;
}
