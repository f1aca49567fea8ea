import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { OutputStore } from '../../output/index.js';
import { type Checkpoint, checkpointFromValue, checkpointValue, pairKey, parseStateFile } from '../state/index.js';
import { MAX_WORKERS, type WorkerSpec } from './worker-spec.js';

/**
 * Scale-out: K worker processes share one job. The (stream, partition) pairs of the job are dealt
 * round-robin to workers 0..K-1; each worker drains its pairs with its own checkpoint and manifest
 * and under its own lock, in one output:
 *
 *   <out>/_workers/agreement.json                                 the run being shared, and K
 *   <out>/_workers/worker-<i>-of-<k>.lock
 *   <out>/_workers/<id>/worker-<i>-of-<k>.checkpoint.json   .../worker-<i>-of-<k>.manifest.json
 *
 * The workers' agreement is the output's checkpoint at the moment the split job started (any
 * progress it had included), written by the first worker under the output's lock. Merging the
 * workers' files back into the output's checkpoint and manifest ends the split job (merge-workers.ts).
 */

/** Where a split job's files lie, and what its worker files are called. */
export interface WorkersPlace {
  dir: string;
  agreementKey: string;
  /** A worker's name in its files' names. */
  name(spec: WorkerSpec): string;
}

export const WORKERS_PLACE: WorkersPlace = {
  dir: '_workers',
  agreementKey: '_workers/agreement.json',
  name: (spec) => `worker-${spec.index}-of-${spec.count}`,
};

/**
 * Outputs of version 0.1 kept a split job under `_shards/` (`plan.json`, `shard-<i>-of-<k>.*`). One
 * still in progress there is read and driven to its end there; the next split job starts in `_workers/`.
 */
export const OLDER_WORKERS_PLACE: WorkersPlace = {
  dir: '_shards',
  agreementKey: '_shards/plan.json',
  name: (spec) => `shard-${spec.index}-of-${spec.count}`,
};

/** The place of the output's split job: `_shards/` when a split job of an older version is there. */
export async function workersPlace(store: OutputStore): Promise<WorkersPlace> {
  return (await store.getText(OLDER_WORKERS_PLACE.agreementKey)) === undefined ? WORKERS_PLACE : OLDER_WORKERS_PLACE;
}

const agreementSchema = z.strictObject({
  version: z.literal(1),
  /** Names the folder of this split job's worker files, so files of an earlier one never mix in. */
  id: z.string().regex(/^[0-9a-f]{16}$/),
  count: z.number().int().min(1).max(MAX_WORKERS),
  createdAt: z.string(),
  /** The streams split among the workers, in order. */
  streams: z.array(z.string()).min(1),
  /** The output's checkpoint when the split job started. */
  checkpoint: z.unknown(),
});

/** The workers' agreement: which run K workers share, as read from (or to be written to) `place`. */
export interface WorkersAgreement extends Omit<z.output<typeof agreementSchema>, 'checkpoint'> {
  checkpoint: Checkpoint;
  place: WorkersPlace;
}

export function newAgreement(
  count: number,
  streams: readonly string[],
  checkpoint: Checkpoint,
  now: string,
  place: WorkersPlace = WORKERS_PLACE,
): WorkersAgreement {
  const id = randomBytes(8).toString('hex');
  return { version: 1, id, count, createdAt: now, streams: [...streams], checkpoint, place };
}

/** The files (keys) of one worker of a split job. */
export function workerKeys(agreement: Pick<WorkersAgreement, 'id' | 'count' | 'place'>, index: number) {
  const { place, id, count } = agreement;
  const base = `${place.dir}/${id}/${place.name({ index, count })}`;
  return { checkpoint: `${base}.checkpoint.json`, manifest: `${base}.manifest.json` };
}

export function workerLockKey(place: WorkersPlace, spec: WorkerSpec): string {
  return `${place.dir}/${place.name(spec)}.lock`;
}

export async function readAgreement(store: OutputStore, place: WorkersPlace): Promise<WorkersAgreement | undefined> {
  const text = await store.getText(place.agreementKey);
  if (text === undefined) return undefined;
  const path = store.where(place.agreementKey);
  const agreement = parseStateFile(text, path, agreementSchema, 'a bulk-extract workers\' agreement');
  return { ...agreement, checkpoint: checkpointFromValue(agreement.checkpoint, path), place };
}

export async function writeAgreement(store: OutputStore, agreement: WorkersAgreement): Promise<void> {
  const { place, checkpoint, ...written } = agreement;
  // The checkpoint inside carries its digest, as in its own file: the workers start from it.
  await store.putText(place.agreementKey, `${JSON.stringify({ ...written, checkpoint: checkpointValue(checkpoint) }, null, 2)}\n`);
}

/** The (stream, partition) pairs of a split job in order: pair j belongs to worker j mod K. */
export function pairsOf(agreement: Pick<WorkersAgreement, 'streams' | 'checkpoint'>): { stream: string; m: number }[] {
  return agreement.streams.flatMap((stream) => {
    const partitions = agreement.checkpoint.streams[stream]?.partitions ?? 0;
    return Array.from({ length: partitions }, (_, i) => ({ stream, m: i + 1 }));
  });
}

/** `stream/m` keys of the pairs of worker `index`. */
export function pairsOfWorker(
  agreement: Pick<WorkersAgreement, 'streams' | 'checkpoint' | 'count'>,
  index: number,
): Set<string> {
  return new Set(
    pairsOf(agreement)
      .filter((_, j) => j % agreement.count === index)
      .map((pair) => pairKey(pair.stream, pair.m)),
  );
}
