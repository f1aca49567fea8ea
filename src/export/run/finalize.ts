import type { JobConfig } from '../../config/load-config.js';
import { type Logger, silentLogger } from '../../log.js';
import { type Clock, systemClock } from '../../util/clock.js';
import { type Manifest, openOutput } from '../state/index.js';
import { LockedError } from '../../output/index.js';
import { holdWorkers, type WorkersAgreement, type WorkersOptions } from '../workers/index.js';
import { planStreams } from '../plan/index.js';
import { folderLock, keepOf, type Setup } from './start-run.js';

/** How long a worker waits for the output folder's lock, which other workers hold only briefly. */
export const WORKER_PATIENCE_MS = 5 * 60_000;

export interface FinalizeResult {
  finalized: boolean;
  /** Workers not complete or still running; none when another run holds the folder and ends the split job. */
  waitingFor: number[];
}

export type AbsorbOutcome =
  /** No split job in the output. */
  | { state: 'none' } |
  /** Workers that hold their lock: they are running. Nothing was changed. */
  { state: 'busy'; agreement: WorkersAgreement; running: number[] } |
  /** `requireComplete` and these workers have partitions left. Nothing was changed. */
  { state: 'incomplete'; agreement: WorkersAgreement; incomplete: number[] } |
  /** Merged into the folder's checkpoint and manifest; `complete`: sealed, with `_SUCCESS`. */
  { state: 'merged'; agreement: WorkersAgreement; manifest: Manifest; complete: boolean };

/**
 * Ends a split job: the workers' checkpoints and manifests are merged into the output folder's
 * own, then the agreement and the workers' files are deleted. When every worker is complete, incremental
 * and snapshot run folders are sealed and `_SUCCESS` is written, as a run without workers would
 * have. Without `requireComplete` unfinished workers are merged too, with their progress (a run
 * without --shard takes over from there). Idempotent up to the deletion of the agreement: a
 * crash before it is finalized again the same way.
 */
export async function absorbWorkers(options: WorkersOptions & { requireComplete: boolean }): Promise<AbsorbOutcome> {
  const held = await holdWorkers(options);
  if (held.state !== 'held') return held;
  try {
    if (options.requireComplete && held.incomplete.length > 0) return { state: 'incomplete', agreement: held.agreement, incomplete: held.incomplete };
    await held.absorb();
    return { state: 'merged', agreement: held.agreement, manifest: held.manifest, complete: held.complete };
  } finally {
    await held.release();
  }
}

/** After a worker completed: the last worker to finish merges them all and ends the run. */
export async function finalizeIfLast(setup: Setup): Promise<FinalizeResult> {
  let outcome: AbsorbOutcome;
  try {
    outcome = await finalizeWorkers(setup);
  } catch (error) {
    if (!(error instanceof LockedError)) throw error;
    // Held past WORKER_PATIENCE_MS: by a run without --shard, which started once no worker ran
    // (this one had let its lock go) and so took over the split job, this worker's share included.
    // Not a refusal: this worker's share is done and committed, and that run ends the split job.
    setup.logger.warn({ err: error.message }, 'worker complete; another run holds the output folder and ends the split job');
    return { finalized: false, waitingFor: [] };
  }
  switch (outcome.state) {
    case 'none': // another worker ended the run between this one's end and now
    case 'merged':
      return { finalized: true, waitingFor: [] };
    case 'busy':
      setup.logger.info({ running: outcome.running }, 'worker complete; the last worker to finish ends the split job');
      return { finalized: false, waitingFor: outcome.running };
    case 'incomplete':
      setup.logger.info({ incomplete: outcome.incomplete }, 'worker complete; other workers have partitions left');
      return { finalized: false, waitingFor: outcome.incomplete };
  }
}

/** `bulk-extract finalize`: ends the output's split job if every worker is complete. */
export async function finalizeJob(
  config: JobConfig,
  logger: Logger = silentLogger,
  clock: Clock = systemClock,
): Promise<AbsorbOutcome> {
  const { store, checkpointKey } = await openOutput(config, logger);
  const now = () => new Date(clock.now()).toISOString();
  const jobStreams = planStreams(config.streams, config.output.formats, undefined, config.output.table);
  try {
    const baseUrl = config.source.baseUrl;
    return await finalizeWorkers({ store, checkpointKey, baseUrl, logger, now, jobStreams, clock });
  } finally {
    await store.close();
  }
}

async function finalizeWorkers(
  setup: Pick<Setup, 'store' | 'checkpointKey' | 'baseUrl' | 'logger' | 'now' | 'jobStreams' | 'clock'>,
): Promise<AbsorbOutcome> {
  const { store, checkpointKey, baseUrl, logger, now, clock } = setup;
  const release = await folderLock(store, clock, WORKER_PATIENCE_MS);
  try {
    const options = { store, checkpointKey, baseUrl, logger, now: now(), keepOf: keepOf(setup) };
    return await absorbWorkers({ ...options, requireComplete: true });
  } finally {
    await release();
  }
}
