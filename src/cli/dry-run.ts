import type { JobConfig } from '../config/load-config.js';
import { type Checkpoint, isComplete, newCheckpoint } from '../export/checkpoint.js';
import { inspectRun } from '../export/inspect-run.js';
import { chainParams, planPartitions } from '../export/plan.js';
import type { StreamPlan } from '../export/streams.js';
import { idleMessage } from '../export/run-job.js';
import { newSharedRun, pairKey, pairsOfWorker, type WorkerSpec } from '../export/workers.js';
import { createPlatformClient } from '../http/create-client.js';
import type { Logger } from '../log.js';
import { authStatus } from './auth.js';
import { EXIT, exitCodeOf } from './exit-codes.js';

/**
 * `run --dry-run`: what a run would do and whether it would be refused, found as the run finds it
 * (drift, missing shards, a held lock, an unwritable output, a bucket it cannot write to), plus a
 * check of the credential. Changes nothing and lists nothing.
 */
export async function dryRun(
  config: JobConfig,
  run: { only: string | undefined; fresh: boolean; repair: boolean; worker: WorkerSpec | undefined },
  logger: Logger,
): Promise<number> {
  const { worker } = run;
  const now = new Date().toISOString();
  const inspection = await inspectRun(config, run, logger, now);
  const { streams } = inspection;
  // A run that would be refused before deciding still shows the plan of a new run.
  const checkpoint = inspection.checkpoint ?? newCheckpoint(config.source.baseUrl, streams, now);
  const client = createPlatformClient(config.source, { configFile: config.file, logger });
  try {
    const status = await authStatus(client, config.source.auth);
    console.log(`credential  ${status.mechanism}, user ${status.user || '(none)'}: ${status.works ? 'works' : 'REFUSED'} (${status.detail})`);
    console.log(`output      ${inspection.destination}\ncheckpoint  ${inspection.checkpointLocation}`);
    if (inspection.lock.state === 'held' && !inspection.lock.alive) {
      console.log(`lock        left by a run that is gone (pid ${inspection.lock.owner?.pid ?? '?'} on ${inspection.lock.owner?.host ?? '?'}); a run takes it over`);
    }
    const idle = new Map(inspection.idle.map((i) => [i.stream, i]));
    for (const stream of streams) {
      const state = checkpoint.streams[stream.name] ?? { window: null };
      const params = new URLSearchParams(chainParams(stream, state)).toString();
      const waiting = idle.get(stream.name);
      const plan = run.fresh
        ? 'starts over from the first page (--fresh deletes its earlier output)'
        : waiting === undefined
          ? whatRunDoes(stream, checkpoint, inspection.resumed)
          : idleMessage(waiting);
      console.log(`stream ${stream.name}: GET /${stream.resource}?${params} in ${stream.partitions} partition(s) -> ${stream.formats.join(' + ')}, ${stream.mode}`);
      console.log(`  ${plan}`);
    }
    const plans = planPartitions(streams, (name) => checkpoint.streams[name] ?? { window: null, run: null });
    if (worker === undefined) {
      console.log(`${plans.length} cursor chains; at most ${config.source.concurrency} requests in flight.`);
    } else {
      // A new sharded run's split; one in progress keeps the split of its plan (the same for equal settings).
      const mine = pairsOfWorker(newSharedRun(worker.count, streams.map((s) => s.name), checkpoint, now), worker.index);
      const chains = streams
        .map((s) => {
          const ms = plans.filter((p) => p.stream === s.name && mine.has(pairKey(p.stream, p.m))).map((p) => p.m);
          return ms.length === 0 ? undefined : `${s.name} ${ms.join(',')}`;
        })
        .filter((text) => text !== undefined);
      console.log(
        `shard ${worker.index}/${worker.count}: ${mine.size} of ${plans.length} cursor chains (${chains.join('; ') || 'none: more shards than chains'}); at most ${config.source.concurrency} requests in flight in this worker.`,
      );
    }
    if (run.repair) {
      const damaged = [...inspection.damaged].map(([pair, problems]) => `\n  ${pair}: ${problems.join('; ')}`).join('');
      console.log(damaged === '' ? 'repair      every shard matches the manifest; nothing to repair' : `repair      would read again:${damaged}`);
    }
    for (const refusal of inspection.refusals) console.log(`REFUSED     a run now would stop here: ${refusal.message}`);
    const [first] = inspection.refusals;
    if (first !== undefined) return exitCodeOf(first);
    return status.works ? EXIT.OK : EXIT.AUTH;
  } finally {
    await client.close();
  }
}

function whatRunDoes(stream: StreamPlan, checkpoint: Checkpoint, resumed: boolean): string {
  const state = checkpoint.streams[stream.name];
  if (state === undefined) return 'a new export';
  const parts = Object.values(state.parts);
  const done = parts.filter((p) => p.done).length;
  const started = parts.some((p) => p.nextSeq > 0 || p.cursor !== null);
  const run = state.run === null ? '' : ` (run=${state.run})`;
  if (isComplete(state)) return `complete; a run re-seals it${run}`;
  return resumed && (started || done > 0) ? `resumes${run}: ${done} of ${parts.length} partitions done` : `starts${run} from the first page`;
}
