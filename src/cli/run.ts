import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { AuthError } from '../http/errors.js';
import { createPlatformClient } from '../http/create-client.js';
import type { Manifest } from '../export/manifest.js';
import { newCheckpoint, streamOf } from '../export/checkpoint.js';
import { chainParams, planPartitions, planStreams } from '../export/plan.js';
import { outputPaths } from '../export/output-target.js';
import { type RunResult, runJob } from '../export/run-job.js';
import type { FinalizeResult } from '../export/start-run.js';
import { newPlan, pairKey, pairsOfShard, resolveShard, type ShardSpec } from '../export/shard.js';
import { createLogger } from '../log.js';
import { authStatus } from './auth.js';
import { EXIT } from './exit-codes.js';
import { withUsage } from './parse-flags.js';
import { duration, startProgress } from './progress.js';

export const RUN_USAGE = `Usage: bulk-extract run --config FILE [options]

Exports the job's streams to Parquet and/or NDJSON shards. Resumes from the checkpoint when there is
one; refuses to resume when the job's settings changed (use --fresh to start over).

Options:
  --config, -c FILE      The job file (YAML or JSON).
  --fresh                Forget earlier progress of the planned streams and start over.
  --dry-run              Validate the config, check the credential, print the plan; fetch nothing.
  --stream NAME          Run only this stream.
  --shards K             Be one of K workers sharing the job (a Kubernetes Indexed Job): this one's
                         index is JOB_COMPLETION_INDEX (0 to K-1). The last to finish ends the run.
  --shard I/K            The same with the index given: shard I (0 to K-1) of K.
  --out DIR              Override output.dir.
  --concurrency N        Override source.concurrency (requests in flight at once).
  --formats LIST         Override output.formats, e.g. parquet,ndjson.
  --log-level LEVEL      debug | info | warn | error (default info).

Exit codes: 0 complete, 1 failed (resumable), 2 usage/config error, 3 auth refused,
130 interrupted (resumable).
`;

const FLAGS = {
  'config': { type: 'string', short: 'c' },
  'fresh': { type: 'boolean', default: false },
  'dry-run': { type: 'boolean', default: false },
  'stream': { type: 'string' },
  'shards': { type: 'string' },
  'shard': { type: 'string' },
  'out': { type: 'string' },
  'concurrency': { type: 'string' },
  'formats': { type: 'string' },
  'log-level': { type: 'string', default: 'info' },
  'help': { type: 'boolean', short: 'h' },
} as const;

export async function runRun(argv: string[]): Promise<number> {
  const { values } = withUsage(RUN_USAGE, () => parseArgs({ args: argv, strict: true, options: FLAGS }));
  if (values.help) {
    console.log(RUN_USAGE);
    return EXIT.OK;
  }
  if (values.config === undefined) throw new UsageError(`--config FILE is required.\n\n${RUN_USAGE}`);
  const concurrency = values.concurrency === undefined ? undefined : Number(values.concurrency);
  if (concurrency !== undefined && !Number.isInteger(concurrency)) {
    throw new UsageError(`--concurrency expects an integer, got '${values.concurrency}'.`);
  }
  const config = loadConfig(values.config, process.env, {
    out: values.out,
    concurrency,
    formats: values.formats?.split(',').map((f) => f.trim()),
  });
  const shard = resolveShard({ shard: values.shard, shards: values.shards }, process.env);
  const logger = createLogger(values['log-level']);
  if (values['dry-run']) return dryRun(config, values.stream, shard);

  const controller = new AbortController();
  const stop = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      logger.warn({ signal }, 'second signal: exiting now; the next run resumes from the last checkpoint');
      process.exit(EXIT.INTERRUPTED);
    }
    logger.warn({ signal }, 'stopping: committing what is complete (send the signal again to exit at once)');
    controller.abort();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  let stopProgress = () => {};
  try {
    const result = await runJob({
      config,
      fresh: values.fresh,
      stream: values.stream,
      shard,
      logger,
      signal: controller.signal,
      onStart: (run) => {
        stopProgress = startProgress(run, logger, process.stderr.isTTY);
      },
    });
    stopProgress();
    console.error(summary(result.manifest, result.rows));
    if (shard !== undefined && result.finalize !== undefined) console.error(shardSummary(shard, result.finalize));
    return exitCode(result);
  } finally {
    stopProgress();
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

function exitCode(result: RunResult): number {
  if (result.errors.some(({ error }) => error instanceof AuthError)) return EXIT.AUTH;
  if (result.state === 'failed') return EXIT.FAILED;
  if (result.state === 'interrupted') return EXIT.INTERRUPTED;
  return EXIT.OK;
}

/** Per-stream rows, files, bytes, then the run's state, duration, rate and retries. */
export function summary(manifest: Manifest, rowsThisRun: number): string {
  const lines = Object.entries(manifest.streams).map(([name, stream]) => {
    const files = manifest.files.filter((f) => f.stream === name);
    const bytes = files.reduce((sum, f) => sum + f.bytes, 0);
    return `  ${name.padEnd(16)} ${stream.rows.toLocaleString('en-US').padStart(13)} rows  ${String(files.length).padStart(5)} files  ${megabytes(bytes).padStart(10)}  ${stream.done ? 'done' : 'not done'}`;
  });
  const seconds = (manifest.durationMs ?? 0) / 1000;
  return [
    `bulk-extract: ${manifest.state} in ${duration(Math.round(seconds))}, ${manifest.requests} requests (${manifest.throttled} throttled), ${manifest.retries} retries, ${Math.round(rowsThisRun / Math.max(seconds, 0.001)).toLocaleString('en-US')} rows/s this run`,
    ...lines,
  ].join('\n');
}

function shardSummary(shard: ShardSpec, finalize: FinalizeResult): string {
  const me = `shard ${shard.index}/${shard.count}`;
  return finalize.finalized
    ? `${me}: complete, and the sharded run is finalized (every shard is complete; _SUCCESS written).`
    : `${me}: complete; shards ${finalize.waitingFor.join(', ')} are not, and the last of them to finish ends the run.`;
}

function megabytes(bytes: number): string {
  return `${(bytes / 1_048_576).toFixed(1)} MiB`;
}

async function dryRun(
  config: ReturnType<typeof loadConfig>,
  only: string | undefined,
  shard: ShardSpec | undefined,
): Promise<number> {
  const streams = planStreams(config.streams, config.output.formats, only);
  // The window a new run would read; a resumed run keeps the one in its checkpoint.
  const now = new Date().toISOString();
  const checkpoint = newCheckpoint(config.source.baseUrl, streams, now);
  const stateOf = (name: string) => streamOf(checkpoint, name);
  const plans = planPartitions(streams, stateOf);
  const client = createPlatformClient(config.source, { configFile: config.file });
  try {
    const status = await authStatus(client, config.source.auth);
    console.log(`credential  ${status.mechanism}, user ${status.user || '(none)'}: ${status.works ? 'works' : 'REFUSED'} (${status.detail})`);
    const { outDir, checkpointPath } = outputPaths(config);
    console.log(`output      ${outDir}\ncheckpoint  ${checkpointPath}`);
    for (const stream of streams) {
      const params = new URLSearchParams(chainParams(stream, stateOf(stream.name))).toString();
      const mode = stream.mode === 'incremental' ? 'incremental (a new run starts at the watermark)' : 'full';
      console.log(
        `stream ${stream.name}: GET /${stream.resource}?${params} in ${stream.partitions} partition(s) -> ${stream.formats.join(' + ')}, ${mode}`,
      );
    }
    if (shard === undefined) {
      console.log(`${plans.length} cursor chains; at most ${config.source.concurrency} requests in flight.`);
    } else {
      // A new sharded run's split; one in progress keeps the split of its plan (the same for equal settings).
      const plan = newPlan(shard.count, streams.map((s) => s.name), checkpoint, now);
      const mine = pairsOfShard(plan, shard.index);
      const chains = streams
        .map((s) => {
          const ms = plans.filter((p) => p.stream === s.name && mine.has(pairKey(p.stream, p.m))).map((p) => p.m);
          return ms.length === 0 ? undefined : `${s.name} ${ms.join(',')}`;
        })
        .filter((text) => text !== undefined);
      console.log(
        `shard ${shard.index}/${shard.count}: ${mine.size} of ${plans.length} cursor chains (${chains.join('; ') || 'none: more shards than chains'}); at most ${config.source.concurrency} requests in flight in this worker.`,
      );
    }
    return status.works ? EXIT.OK : EXIT.AUTH;
  } finally {
    await client.close();
  }
}
