import { Gauge, Pushgateway, Registry } from 'prom-client';
import type { JobConfig } from '../config/load-config.js';
import { exportLabelOf } from '../config/metrics-schema.js';
import type { WorkerSpec } from '../export/index.js';
import type { Logger } from '../log.js';

/** The one metric a run refused because another live run holds its output publishes. */
export const OVERLAP_REFUSED = 'bulk_extract_overlap_refused_timestamp_seconds';

/** A registry holding only the refusal's gauge: `export`, and when the run was refused (Unix seconds). */
export function overlapRefusedRegistry(exportLabel: string, refusedAtMs: number): Registry {
  const registry = new Registry();
  const gauge = new Gauge({
    name: OVERLAP_REFUSED,
    help: 'When a run was last refused because another live run held the output (an overlap, exit 75), seconds since the epoch.',
    labelNames: ['export'],
    registers: [registry],
  });
  gauge.set({ export: exportLabel }, refusedAtMs / 1000);
  return registry;
}

export interface OverlapRefusal {
  /** When the run was refused, ms since the epoch. */
  refusedAtMs: number;
  /** This process as worker I of K: its group has `shard` too, as its run-wide pushes would. */
  worker?: WorkerSpec | undefined;
  /** How long the push may take; default 10 s. */
  timeoutMs?: number;
}

/**
 * Publishes that a run was refused because another live run holds its output: a POST of that one
 * metric family to the Pushgateway group of the run-wide metrics (`job=<export>`, with `shard` for a
 * worker). A POST replaces only the families it carries, so the live run's metrics in that group
 * stay as it pushed them. Nothing else: the textfile and the port belong to the live run, which
 * is still writing and serving them. Never rejects: a failed push is a warning.
 */
export async function publishOverlapRefused(config: JobConfig, logger: Logger, refusal: OverlapRefusal): Promise<void> {
  const url = config.metrics?.pushgateway;
  if (url === undefined) return;
  const jobName = exportLabelOf(config.metrics, config.file);
  const registry = overlapRefusedRegistry(jobName, refusal.refusedAtMs);
  const groupings = refusal.worker === undefined ? undefined : { shard: String(refusal.worker.index) };
  try {
    const gateway = new Pushgateway(url, { timeout: refusal.timeoutMs ?? 10_000 }, registry);
    await gateway.pushAdd(groupings === undefined ? { jobName } : { jobName, groupings });
    logger.debug({ metric: OVERLAP_REFUSED }, `metrics: pushed the overlap refusal to ${url}`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    logger.warn({ err: message }, `metrics: pushing the overlap refusal to ${url} failed: ${message}`);
  }
}
