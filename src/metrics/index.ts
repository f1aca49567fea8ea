import { resolve } from 'node:path';
import type { JobConfig } from '../config/load-config.js';
import { exportLabelOf } from '../config/metrics-schema.js';
import { planStreams, type RunHandle, streamName, type WorkerSpec } from '../export/index.js';
import type { Logger } from '../log.js';
import { endpointOutput, type MetricsOutput, pushgatewayOutput, textfileOutput } from './outputs.js';
import { type PushScope, removeStaleGroups } from './push-groups.js';
import { type EarlierRuns, RunMetrics } from './run-metrics.js';

export type { EarlierRuns } from './run-metrics.js';
export { readEarlierRuns, readStreamDataEnds } from './earlier-runs.js';
export { RunMetrics } from './run-metrics.js';
export { OVERLAP_REFUSED, type OverlapRefusal, overlapRefusedRegistry, publishOverlapRefused } from './overlap-refused.js';

/** A run's metrics and where they go, from the job file's `metrics:` (and its flags). */
export interface MetricsSession {
  readonly metrics: RunMetrics;
  /** The export started draining: its figures are read from `run` from now on. */
  attach(run: RunHandle): void;
  /**
   * The run ended with `exitCode` and the error `code` (default none) at `endedAtMs`: the data
   * ends are read again, then the last textfile and push, and the endpoint closes.
   */
  finish(exitCode: number, endedAtMs?: number, code?: string, jobComplete?: boolean): Promise<void>;
}

export interface MetricsOptions {
  /** The stream `--stream` limits the run to. */
  only?: string | undefined;
  /** This process as worker I of K (`--shard I/K`): its pushes are grouped by `shard` too. */
  worker?: WorkerSpec | undefined;
  earlier?: EarlierRuns;
  /**
   * The streams' data ends as the output says now (readStreamDataEnds), read at the start and at
   * the end; undefined when they cannot be read, which keeps those known.
   */
  dataEnds?: () => Promise<ReadonlyMap<string, number> | undefined>;
  now?: () => number;
}

/**
 * Starts the outputs that `config.metrics` asks for: the textfile and the Pushgateway at once and
 * every `intervalSeconds`, the endpoint until finish(). Undefined when it asks for none.
 */
export async function startMetrics(
  config: JobConfig,
  logger: Logger,
  options: MetricsOptions = {},
): Promise<MetricsSession | undefined> {
  const settings = config.metrics;
  const wanted = settings?.textfile ?? settings?.pushgateway ?? settings?.port;
  if (settings === undefined || wanted === undefined) return undefined;
  const now = options.now ?? Date.now;
  const streams = planStreams(config.streams, config.output.formats, options.only).map((stream) => ({
    name: stream.name,
    formats: stream.formats,
    mode: stream.mode,
  }));
  const label = exportLabelOf(settings, config.file);
  const metrics = new RunMetrics(label, streams, options.earlier ?? {}, now(), now, settings.runDeadline);
  const readDataEnds = async () => {
    const ends = await options.dataEnds?.();
    if (ends !== undefined) metrics.setDataEnds(ends);
  };
  await readDataEnds();
  const outputs: MetricsOutput[] = [];
  if (settings.textfile !== undefined) outputs.push(textfileOutput(resolve(settings.textfile), metrics, logger));
  if (settings.pushgateway !== undefined) {
    const shard = options.worker === undefined ? undefined : String(options.worker.index);
    outputs.push(pushgatewayOutput(settings.pushgateway, metrics, logger, shard));
  }
  if (settings.port !== undefined) outputs.push(await endpointOutput(settings.host, settings.port, metrics, logger));
  const publish = () => Promise.all(outputs.map((output) => output.publish()));
  await publish();
  const timer = setInterval(() => void publish(), settings.intervalSeconds * 1000);
  timer.unref();
  const pushgateway = settings.pushgateway;
  return {
    metrics,
    attach: (run) => {
      metrics.attach(run);
      // The run holds the output's lock now: the groups earlier runs left are its to remove.
      if (pushgateway !== undefined) {
        const scope = { jobName: metrics.exportLabel, worker: options.worker, streams: config.streams.map(streamName) };
        void cleanUp(pushgateway, scope, logger);
      }
    },
    async finish(exitCode, endedAtMs, code, jobComplete) {
      clearInterval(timer);
      metrics.finish(exitCode, endedAtMs, code, jobComplete);
      await readDataEnds();
      await publish();
      await Promise.all(outputs.map((output) => output.close()));
    },
  };
}

/** Removes the Pushgateway groups earlier runs left (push-groups.ts); a failure is a warning, the export goes on. */
async function cleanUp(url: string, scope: PushScope, logger: Logger): Promise<void> {
  try {
    const removed = await removeStaleGroups(url, scope, 10_000);
    if (removed.length > 0) {
      const groups = removed.map((grouping) => Object.entries(grouping).map(([name, value]) => `${name}=${value}`).join(',') || '(run-wide)');
      logger.info({ groups }, `metrics: removed ${removed.length} group(s) of earlier runs from the Pushgateway`);
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    logger.warn({ err: message }, `metrics: cannot remove the groups earlier runs left at ${url} (the export goes on): ${message}`);
  }
}
