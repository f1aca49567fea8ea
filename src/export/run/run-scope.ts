import { UsageError } from '../../errors.js';
import { sealWindow, type Manifest, type RunState, type StreamPlan, streamOf, SUCCESS_FILE } from '../state/index.js';
import type { WorkerSpec } from '../workers/index.js';
import type { Committer } from '../partition/index.js';
import { type FinalizeResult, finalizeIfLast } from './finalize.js';
import { type Setup, type Started, startWhole } from './start-run.js';
import { startWorker } from './start-worker.js';

/**
 * What a run covers, decided once when it starts: the whole job under the output folder's lock, or
 * one worker's share of a job split among K processes, under that worker's lock. Everything the two
 * do differently is here; the rest of a run is the same for both.
 */
export interface RunScope {
  /** For the run's first log line: nothing, or which worker this is. */
  readonly logFields: Readonly<Record<string, string>>;
  /** Takes the scope's lock and decides what the run drains (start-run.ts, start-worker.ts). */
  start(setup: Setup): Promise<Started>;
  /** The streams whose completion completes this run: every stream of the job, or the worker's own. */
  completes(setup: Setup): readonly StreamPlan[];
  /**
   * After the manifest's final state is written: seal the runs that completed and write `_SUCCESS`,
   * or (a worker) let the lock go and end the split job if this worker was the last.
   */
  end(ended: Ended): Promise<{ finalize?: FinalizeResult; release: () => Promise<void> }>;
}

export interface Ended {
  setup: Setup;
  committer: Committer;
  state: RunState;
  manifest: Manifest;
  release: () => Promise<void>;
}

export interface ScopeFlags {
  fresh?: boolean | undefined;
  repair?: boolean | undefined;
  stream?: string | undefined;
  worker?: WorkerSpec | undefined;
}

/** The scope of a run with these flags; refuses the flags a worker cannot take. */
export function runScope(flags: ScopeFlags): RunScope {
  const { worker, fresh = false, repair = false } = flags;
  if (worker !== undefined && (fresh || repair || flags.stream !== undefined)) {
    const flag = fresh ? '--fresh' : repair ? '--repair' : '--stream';
    throw new UsageError(
      `--shard splits all of the job's streams among ${worker.count} workers; ${flag} cannot be combined with it. Start over by running once without --shard (with --fresh), or give the shards another output.dir.`,
    );
  }
  if (repair && fresh) {
    throw new UsageError('--repair reads damaged partitions again and keeps the rest; --fresh starts everything over: give one.');
  }
  if (worker === undefined) return wholeJob({ fresh, repair });
  return workerShare(worker);
}

function wholeJob(mode: { fresh: boolean; repair: boolean }): RunScope {
  return {
    logFields: {},
    start: (setup) => startWhole(setup, mode),
    completes: (setup) => setup.jobStreams,
    async end({ setup, committer, state: runState, manifest, release }) {
      const { store, baseUrl, logger } = setup;
      for (const stream of setup.streams) {
        const state = streamOf(committer.state, stream.name);
        const run = { stream: stream.name, state, files: manifest.files, keep: stream.keep };
        await sealWindow({ store, baseUrl, logger }, run);
      }
      if (runState === 'complete') await store.putText(SUCCESS_FILE, '');
      return { release };
    },
  };
}

function workerShare(spec: WorkerSpec): RunScope {
  return {
    logFields: { worker: `${spec.index}/${spec.count}` },
    start: (setup) => startWorker(setup, spec),
    // A worker's checkpoint holds its own partitions only: complete when they are.
    completes: (setup) => setup.streams,
    async end({ setup, state, release }) {
      if (state !== 'complete') return { release };
      // The worker's lock goes first: the merge takes every worker's lock.
      await release();
      return { finalize: await finalizeIfLast(setup), release: async () => {} };
    },
  };
}
