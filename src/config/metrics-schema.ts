import { basename, extname, resolve } from 'node:path';
import { z } from 'zod';
import { duration } from './duration.js';

const pushgatewayUrl = z.string().superRefine((text, ctx) => {
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (url === undefined || !/^https?:$/.test(url.protocol)) {
    ctx.addIssue({ code: 'custom', message: 'expected the http(s):// URL of a Pushgateway, e.g. http://pushgateway:9091' });
  } else if (url.username !== '' || url.password !== '') {
    // It would be logged with every failed push.
    ctx.addIssue({ code: 'custom', message: 'expected a URL without user or password' });
  } else if (url.search !== '' || url.hash !== '') {
    ctx.addIssue({ code: 'custom', message: 'expected a URL without ?query or #fragment' });
  }
});

/**
 * `metrics:`: where a run's Prometheus metrics go (docs/monitoring.md#prometheus-metrics). Any of
 * the three outputs, or none; a failing output is logged and never fails the export.
 */
export const metricsSchema = z.strictObject({
  /** The `export` label of every metric, and the Pushgateway's `job`; default: the job file's name, less extension. */
  export: z.string().min(1).max(200).optional(),
  /** node_exporter textfile collector file, replaced atomically every intervalSeconds and at the end. */
  textfile: z
    .string()
    .min(1)
    .refine((path) => path.endsWith('.prom'), "expected a file name ending in .prom (node_exporter's textfile collector reads only those)")
    .optional(),
  /** Pushgateway base URL: pushed every intervalSeconds and at the end, grouped by job and stream. */
  pushgateway: pushgatewayUrl.optional(),
  /** Serve `/metrics` on this port while the run lasts. */
  port: z.number().int().min(1).max(65_535).optional(),
  /** The address `port` listens on. */
  host: z.string().min(1).default('0.0.0.0'),
  /** How often the textfile is written and the Pushgateway pushed, in seconds. */
  intervalSeconds: z.number().min(1).max(3600).default(15),
  /**
   * How long a run may last ('50m', '48h'; default 50 minutes, for hourly runs): published as the
   * run's deadline with every push, so that a Pushgateway group never keeps an earlier run's, after
   * which (plus a margin) the alerts call a run that has not ended dead or hung. It does not stop the run.
   */
  runDeadline: duration
    .pipe(z.number().min(60_000, 'at least 1 minute').max(30 * 86_400_000, 'at most 30 days'))
    .default(50 * 60_000),
});

export type MetricsConfig = z.output<typeof metricsSchema>;

/** The `export` label: `metrics.export`, else the job file's name without its extension. */
export function exportLabelOf(metrics: MetricsConfig | undefined, configFile: string): string {
  return metrics?.export ?? basename(configFile, extname(configFile));
}

/** '50 min', '48 h': a deadline as the dry run shows it. */
function formatDuration(ms: number): string {
  return ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : `${Math.round(ms / 60_000)} min`;
}

/** Where a run's metrics go, in one line (`run --dry-run`); undefined when nowhere. */
export function describeMetrics(
  metrics: MetricsConfig | undefined,
  configFile: string,
  /** Said right after the textfile (`; FOLDER does not exist: the run creates it`). */
  textfileNote = '',
): string | undefined {
  if (metrics === undefined) return undefined;
  const every = `every ${metrics.intervalSeconds} s and at the end`;
  const outputs = [
    metrics.textfile === undefined ? undefined : `textfile ${resolve(metrics.textfile)} (${every})${textfileNote}`,
    metrics.pushgateway === undefined ? undefined : `push to ${metrics.pushgateway} (${every})`,
    metrics.port === undefined ? undefined : `/metrics on ${metrics.host}:${metrics.port} while the run lasts`,
  ].filter((output) => output !== undefined);
  if (outputs.length === 0) return undefined;
  const deadline = `deadline ${formatDuration(metrics.runDeadline)} after the start`;
  return `export="${exportLabelOf(metrics, configFile)}": ${outputs.join('; ')}; ${deadline}`;
}
