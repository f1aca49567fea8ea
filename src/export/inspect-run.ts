import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { JobConfig } from '../config/load-config.js';
import { BulkExtractError, ConfigError } from '../errors.js';
import type { Logger } from '../log.js';
import type { OutputStore } from '../output/store.js';
import type { Checkpoint } from './checkpoint.js';
import { readShardedRun } from './finalize.js';
import { CHECKPOINT_FILE, LOCK_FILE, MANIFEST_FILE } from './layout.js';
import { inspectLock, LockedError, type LockState } from './lock.js';
import { Mirror } from './mirror.js';
import { openStore, outputPaths } from './output-target.js';
import { planStreams, type StreamPlan } from './plan.js';
import { type IdleStream, prepareOutput, restarted } from './prepare-output.js';
import { shardLockPath } from './shard.js';

/** What a run of the job would do with its output, found without changing anything. */
export interface RunInspection {
  /** The output as users name it: the folder, or s3://bucket/prefix. */
  destination: string;
  checkpointLocation: string;
  streams: StreamPlan[];
  lock: LockState;
  /** The checkpoint the run would drain (undefined when it would be refused before deciding). */
  checkpoint: Checkpoint | undefined;
  resumed: boolean;
  idle: IdleStream[];
  /** With repair: the damaged partitions it would read again, with what is wrong. */
  damaged: Map<string, string[]>;
  /** Why the run would be refused; empty when it would start. */
  refusals: BulkExtractError[];
}

/**
 * Decides what a run of `config` would do, as the run decides it, but changes nothing: it takes
 * no lock and writes no file (an s3:// output gets one probe object, written and deleted, to prove
 * the credentials can write there). The run's refusals are collected rather than thrown.
 */
export async function inspectRun(
  config: JobConfig,
  run: { only: string | undefined; fresh: boolean; repair: boolean },
  logger: Logger,
  now: string,
): Promise<RunInspection> {
  const { only, fresh, repair } = run;
  const streams = planStreams(config.streams, config.output.formats, only);
  const paths = outputPaths(config);
  const refusals: BulkExtractError[] = [];
  const store = paths.s3 ? await openStore(config, logger) : undefined;
  // An s3:// output: the bucket's checkpoint and manifest, read into a scratch folder.
  const outDir = store === undefined ? paths.outDir : await mkdtemp(join(tmpdir(), 'bulk-extract-dry-run-'));
  try {
    if (store !== undefined) refusals.push(...(await copyState(store, outDir)));
    else refusals.push(...(await creatable(outDir)));
    const lock = store === undefined ? await inspectLock(join(outDir, LOCK_FILE)) : { state: 'free' as const };
    if (lock.state === 'held' && lock.alive) {
      const owner = lock.owner === undefined ? '' : ` (pid ${lock.owner.pid} on ${lock.owner.host}, since ${lock.owner.startedAt})`;
      refusals.push(new LockedError(`${outDir} is in use by another bulk-extract run${owner}; a run now would be refused.`));
    }
    const sharded =
      store === undefined ? await readShardedRun(outDir, logger, now).catch(collect(refusals)) : undefined;
    if (sharded !== undefined) {
      for (let index = 0; index < sharded.plan.count; index++) {
        const shardLock = await inspectLock(shardLockPath(outDir, { index, count: sharded.plan.count }));
        if (shardLock.state === 'held' && shardLock.alive) {
          refusals.push(new LockedError(`${outDir}: shard ${index}/${sharded.plan.count} of a sharded run is running; a run without --shard now would be refused.`));
        }
      }
    }
    const checkpointPath = store === undefined ? paths.checkpointPath : join(outDir, CHECKPOINT_FILE);
    const prepared = await prepareOutput({
      outDir,
      checkpointPath,
      baseUrl: config.source.baseUrl,
      streams,
      fresh,
      repair,
      now,
      logger,
      mirror: store === undefined ? undefined : new Mirror(outDir, store),
      recorded:
        sharded === undefined
          ? undefined
          : { checkpoint: sharded.checkpoint, manifest: restarted(sharded.manifest, now) },
    }).catch(collect(refusals));
    if (store !== undefined) refusals.push(...(await probeWrite(store)));
    return {
      destination: store?.location ?? outDir,
      checkpointLocation: store === undefined ? checkpointPath : `${store.location}/${CHECKPOINT_FILE}`,
      streams,
      lock,
      checkpoint: prepared?.checkpoint,
      resumed: prepared?.resumed ?? false,
      idle: prepared?.idle ?? [],
      damaged: prepared?.damaged ?? new Map<string, string[]>(),
      refusals,
    };
  } finally {
    if (store !== undefined) {
      await rm(outDir, { recursive: true, force: true });
      await store.close();
    }
  }
}

/** Records a refusal and carries on with undefined; anything else is a bug and is thrown. */
function collect(refusals: BulkExtractError[]) {
  return (error: unknown): undefined => {
    if (!(error instanceof BulkExtractError)) throw error;
    refusals.push(error);
    return undefined;
  };
}

async function copyState(store: OutputStore, dir: string): Promise<BulkExtractError[]> {
  try {
    for (const name of [CHECKPOINT_FILE, MANIFEST_FILE]) {
      const text = await store.getText(name);
      if (text !== undefined) await writeFile(join(dir, name), text);
    }
    return [];
  } catch (error) {
    if (error instanceof BulkExtractError) return [error];
    throw error;
  }
}

/** A folder that does not exist yet must be creatable: its nearest existing parent writable. */
async function creatable(outDir: string): Promise<BulkExtractError[]> {
  for (let dir = outDir; ; dir = dirname(dir)) {
    const exists = await access(dir).then(() => true, () => false);
    if (!exists) continue;
    if (dir === outDir) return [];
    const writable = await access(dir, constants.W_OK | constants.X_OK).then(() => true, () => false);
    return writable ? [] : [new ConfigError(`output.dir: cannot create ${outDir} (EACCES: ${dir} is not writable).`)];
  }
}

/** Proves the bucket exists and the credentials can write there: one small object, put then deleted. */
async function probeWrite(store: OutputStore): Promise<BulkExtractError[]> {
  const key = `_probe-${randomBytes(6).toString('hex')}`;
  try {
    await store.putText(key, 'bulk-extract --dry-run: a probe that the credentials can write here; deleted at once.\n');
    await store.remove([key]);
    return [];
  } catch (error) {
    if (error instanceof BulkExtractError) return [error];
    throw error;
  }
}
