import type { JobConfig } from '../config/load-config.js';
import type { RunHandle, WorkerSpec } from '../export/index.js';
import type { Logger } from '../log.js';
import type { MetricsSession } from '../metrics/index.js';

/** How a run ended, besides its exit code (MetricsGate.end). */
export interface EndOptions {
  endedAtMs?: number | undefined;
  overlap?: boolean;
  /** The error's stable code; `none` for none. */
  code?: string | undefined;
  /** The whole job complete (for a worker: the split job finalized): only then is it a success. */
  jobComplete?: boolean;
}

export interface GateOptions {
  /** The stream `--stream` limits the run to. */
  only?: string | undefined;
  worker?: WorkerSpec | undefined;
}

/**
 * A run's metrics, started only once the run holds its output. Until then another live run may
 * hold it, whose textfile, Pushgateway group and port these would overwrite. A run refused because
 * another live run holds the output publishes only when it was refused; a run that ends any other
 * way publishes its metrics, started at its end if it never held the output (refused for drift,
 * say). prom-client is loaded only when the job asks for metrics.
 */
export class MetricsGate {
  private opening: Promise<void> | undefined;
  private session: MetricsSession | undefined;

  constructor(
    private readonly config: JobConfig,
    private readonly logger: Logger,
    private readonly options: GateOptions,
  ) {}

  /** The run holds its output: the textfile, the first push and the endpoint start now. */
  open(): Promise<void> {
    this.opening ??= this.start();
    return this.opening;
  }

  /** The export started draining: its figures are read from `run` from now on. */
  attach(run: RunHandle): void {
    this.session?.attach(run);
  }

  /**
   * The run ended with `exitCode` (at `endedAtMs`, default now) and the error `code` (`none` for
   * none). `overlap`: refused because another live run holds the output; unless this run held it
   * first, only the refusal is published.
   */
  async end(
    exitCode: number,
    options: EndOptions = {},
  ): Promise<void> {
    if (options.overlap === true && this.opening === undefined) {
      if (this.config.metrics === undefined) return;
      const { publishOverlapRefused } = await import('../metrics/index.js');
      await publishOverlapRefused(this.config, this.logger, {
        refusedAtMs: options.endedAtMs ?? Date.now(),
        worker: this.options.worker,
      });
      return;
    }
    await this.open();
    await this.session?.finish(exitCode, options.endedAtMs, options.code, options.jobComplete);
  }

  private async start(): Promise<void> {
    if (this.config.metrics === undefined) return;
    const { readEarlierRuns, readStreamDataEnds, startMetrics } = await import('../metrics/index.js');
    const { config, logger } = this;
    const earlier = await readEarlierRuns(config, logger);
    const dataEnds = () => readStreamDataEnds(config, logger);
    this.session = await startMetrics(config, logger, { ...this.options, earlier, dataEnds });
  }
}
