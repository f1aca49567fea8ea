import { SyncCursorError } from '../../errors.js';
import { AuthError } from '../../http/errors.js';
import type { PlatformClient } from '../../http/platform-client.js';
import { errorFields, type Logger } from '../../log.js';
import { schemaColumns } from '../../sink/index.js';
import { type Checkpoint, collectionOf, isComplete, type Manifest, type RunState, type StreamPlan } from '../state/index.js';
import { streamKind } from '../kinds/index.js';
import type { Committer, PartitionOutcome, PartitionPlan } from '../partition/index.js';
import type { FinalizeResult } from './finalize.js';
import type { RunScope } from './run-scope.js';
import type { Setup } from './start-run.js';

/** A stream read to its end without a row, and why, as its kind tells it. */
export interface EmptyRun {
  stream: string;
  note: string;
}

export interface Finished {
  result: {
    state: RunState;
    manifest: Manifest;
    errors: { stream: string; m: number; error: unknown }[];
    /** Streams this run read to their end without a row, with what their kind says of it (StreamKind.emptyRun). */
    empty: EmptyRun[];
    finalize?: FinalizeResult;
  };
  /** What is left to release: a worker that ended its run has let its lock go already. */
  release: () => Promise<void>;
}

/**
 * Ends a run once its partitions settled: logs the failures (a refused credential once, not per
 * partition), writes the manifest's final state, and leaves the rest to the run's scope (sealing
 * and `_SUCCESS` for the whole job, the end of the split job for its last worker).
 */
export async function finishRun(options: {
  setup: Setup;
  scope: RunScope;
  committer: Committer;
  client: PlatformClient;
  plans: readonly PartitionPlan[];
  outcomes: readonly PromiseSettledResult<PartitionOutcome>[];
  release: () => Promise<void>;
  /** The run's signal: stops the questions of an empty stream's note too. */
  signal?: AbortSignal | undefined;
}): Promise<Finished> {
  const { setup, scope, committer, client, plans, outcomes } = options;
  const { streams, logger } = setup;
  const errors = outcomes.flatMap((outcome, i) =>
    outcome.status === 'rejected' ? [{ stream: plans[i]?.stream.name ?? '?', m: plans[i]?.m ?? 0, error: outcome.reason as unknown }] : [],
  );
  const refused = errors.find(({ error }) => error instanceof AuthError);
  if (refused !== undefined) {
    logger.error(errorFields(refused.error, logger), `the credential was refused; every partition stopped: ${(refused.error as Error).message}`);
  } else {
    let cursorRefused = false;
    for (const { stream, m, error } of errors) {
      // The refusal's choices hold for every query: said in full once.
      const said = error instanceof SyncCursorError && cursorRefused;
      const message = said ? 'the platform refused its saved sync cursor too (see above)' : (error as Error).message;
      cursorRefused ||= error instanceof SyncCursorError;
      logger.error({ stream, partition: m, ...errorFields(error, logger) }, `partition failed: ${stream} partition ${m}: ${message}`);
    }
  }
  const interrupted = outcomes.some((o) => o.status === 'fulfilled' && o.value === 'interrupted');
  const complete = scope.completes(setup).every(({ name }) => {
    const state = committer.state.streams[name];
    return state !== undefined && isComplete(state);
  });
  // Not complete without a failure or an interruption: the job has streams this run did not read (--stream).
  const state: RunState = errors.length > 0 ? 'failed' : interrupted ? 'interrupted' : complete ? 'complete' : 'incomplete';
  const manifest = await committer.finish(state, {
    requests: client.stats.requests,
    retries: client.stats.retries,
    throttled: client.stats.throttled,
    schema: Object.fromEntries(
      [...new Set(streams.filter((s) => s.formats.includes('parquet')).map((s) => s.resource))]
        // Datapoints and instances streams list their columns in their own entry of the manifest.
        .flatMap((resource) => collectionOf(resource) ?? [])
        .map((r) => [r, schemaColumns(r)]),
    ),
  });
  const empty = await emptyRuns({ client, logger, signal: options.signal }, streams, committer.state, plans);
  for (const { stream, note } of empty) logger.warn({ stream }, `${stream}: ${note}`);
  const ended = await scope.end({ setup, committer, state, manifest, release: options.release });
  const result: Finished['result'] = { state, manifest, errors, empty };
  if (ended.finalize !== undefined) result.finalize = ended.finalize;
  return { result, release: ended.release };
}

/**
 * The streams this run drained to their end without a row that their kind has a word for, in
 * the job's order. Their kinds may ask the platform (a datapoints stream: where its series'
 * points are): one stream after another, as the run's data is written and little is left to do.
 */
async function emptyRuns(
  ask: { client: PlatformClient; logger: Logger; signal: AbortSignal | undefined },
  streams: readonly StreamPlan[],
  checkpoint: Checkpoint,
  plans: readonly PartitionPlan[],
): Promise<EmptyRun[]> {
  const drained = new Set(plans.map((plan) => plan.stream.name));
  const empty: EmptyRun[] = [];
  for (const stream of streams) {
    const state = checkpoint.streams[stream.name];
    if (!drained.has(stream.name) || state === undefined || !isComplete(state)) continue;
    if (Object.values(state.parts).some((part) => part.rows > 0)) continue;
    const note = await streamKind(stream.resource).emptyRun(ask.client, stream, state, ask.logger, ask.signal);
    if (note !== undefined) empty.push({ stream: stream.name, note });
  }
  return empty;
}
