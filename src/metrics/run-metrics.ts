import { Counter, Gauge, Registry } from 'prom-client';
import type { RunHandle, StreamProgress } from '../export/index.js';
import type { StatusClass } from '../http/platform-client.js';

const PREFIX = 'bulk_extract_';
const STATUS_CLASSES: readonly StatusClass[] = ['2xx', '3xx', '4xx', '5xx', 'none'];

/** What the metrics know of the runs before this one (from the output's run records). */
export interface EarlierRuns {
  /** When the last run that exited 0 ended, ms since the epoch. */
  lastSuccessMs?: number | undefined;
  lastExitCode?: number | undefined;
}

/** A stream of the run, with the formats it writes. */
export interface MetricsStream {
  name: string;
  formats: readonly string[];
}

/**
 * The Prometheus metrics of one run, read from the running export whenever they are collected
 * (nothing is counted twice: the figures are the client's, the budget's and the manifest's own).
 * The run-wide metrics are in one registry and each stream's in its own, so that a Pushgateway
 * push groups them by job and by stream; `merged()` holds them all, for a textfile or `/metrics`.
 *
 * Counters count this run only: a new process starts them at zero, as Prometheus expects of a
 * restarted target. `last_success_timestamp_seconds` and `last_run_exit_code` start from the
 * earlier runs and change when this one finishes.
 */
export class RunMetrics {
  readonly job = new Registry();
  /** Each stream's metrics alone, for a Pushgateway group of its own. */
  readonly streams = new Map<string, Registry>();
  /** Every stream's metrics (prom-client merges registries only when no metric name repeats). */
  private readonly allStreams = new Registry();
  private run: RunHandle | undefined;
  private finishedAtMs: number | undefined;
  private lastSuccessMs: number | undefined;
  private lastExitCode: number | undefined;

  constructor(
    readonly exportLabel: string,
    streams: readonly MetricsStream[],
    earlier: EarlierRuns,
    private readonly startedAtMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.lastSuccessMs = earlier.lastSuccessMs;
    this.lastExitCode = earlier.lastExitCode;
    this.defineRunMetrics();
    this.defineStreamMetrics(streams, this.allStreams);
    for (const stream of streams) this.streams.set(stream.name, this.defineStreamMetrics([stream], new Registry()));
  }

  /** Starts reading the export's figures (once it drains). */
  attach(run: RunHandle): void {
    this.run = run;
  }

  /**
   * The run ended with `exitCode` at `endedAtMs` (default now; the run's `finishedAt`, so that the
   * last success equals its record's): its duration stops, and it becomes the last run.
   */
  finish(exitCode: number, endedAtMs = this.now()): void {
    this.finishedAtMs = endedAtMs;
    this.lastExitCode = exitCode;
    if (exitCode === 0) this.lastSuccessMs = this.finishedAtMs;
  }

  /** Every metric in one registry. */
  merged(): Registry {
    return Registry.merge([this.job, this.allStreams]);
  }

  private defineRunMetrics(): void {
    const label = { export: this.exportLabel };
    const registers = [this.job];
    const client = () => this.run?.client;
    new Counter({
      name: `${PREFIX}requests_total`,
      help: 'Requests to the platform that reached it, by the class of their answer (none: no answer came).',
      labelNames: ['export', 'status_class'],
      registers,
      collect() {
        this.reset();
        const answers: Partial<Record<StatusClass, number>> = client()?.stats.answers ?? {};
        for (const cls of STATUS_CLASSES) this.inc({ ...label, status_class: cls }, answers[cls] ?? 0);
      },
    });
    runWide('counter', 'retries_total', 'Requests sent again after a retryable failure.', () => client()?.stats.retries ?? 0);
    runWide('counter', 'throttled_total', 'Answers that were HTTP 429 (also counted in requests_total).', () => client()?.stats.throttled ?? 0);
    runWide('gauge', 'limiter_concurrency', 'Requests the adaptive limiter lets be in flight at once now.', () => client()?.limiterState()?.concurrency);
    runWide('gauge', 'limiter_rate', 'Request starts per second the adaptive limiter allows now; 0 while unpaced.', () => {
      const state = client()?.limiterState();
      return state === undefined ? undefined : (state.ratePerSecond ?? 0);
    });
    runWide('gauge', 'pages_in_flight', 'Pages asked for or held in memory, not yet written.', () => this.run?.budget.pages);
    runWide('gauge', 'buffered_bytes', 'Response bytes held in memory now (source.maxBufferedBytes bounds them).', () => this.run?.budget.held);
    runWide('gauge', 'run_start_timestamp_seconds', 'When this run started, seconds since the epoch.', () => this.startedAtMs / 1000);
    runWide('gauge', 'run_duration_seconds', 'How long this run has lasted, or lasted once it ended.', () =>
      ((this.finishedAtMs ?? this.now()) - this.startedAtMs) / 1000,
    );
    runWide('gauge', 'last_success_timestamp_seconds', 'When the last run that exited 0 ended, seconds since the epoch.', () =>
      this.lastSuccessMs === undefined ? undefined : this.lastSuccessMs / 1000,
    );
    runWide('gauge', 'last_run_exit_code', 'Exit code of the last run that ended (0 complete, 1 failed, 2 usage, 3 auth, 130 interrupted).', () =>
      this.lastExitCode,
    );

    /** A run-wide metric whose value is read at each collection; none while `value` has none. */
    function runWide(kind: 'counter' | 'gauge', name: string, help: string, value: () => number | undefined): void {
      const configuration = {
        name: `${PREFIX}${name}`,
        help,
        labelNames: ['export'] as const,
        registers,
        // After reset() a metric holds no value, so inc() sets it, for a counter as for a gauge.
        collect(this: Counter<'export'> | Gauge<'export'>) {
          this.reset();
          const current = value();
          if (current !== undefined) this.inc(label, current);
        },
      };
      if (kind === 'counter') new Counter(configuration);
      else new Gauge(configuration);
    }
  }

  /** The per-stream metrics of `streams`, registered in `registry`. */
  private defineStreamMetrics(streams: readonly MetricsStream[], registry: Registry): Registry {
    const registers = [registry];
    const labelsOf = (stream: MetricsStream) => ({ export: this.exportLabel, stream: stream.name });
    const perFormat = (name: string, help: string, of: (file: { rows: number; bytes: number }) => number) =>
      new Counter({
        name: `${PREFIX}${name}`,
        help,
        labelNames: ['export', 'stream', 'format'],
        registers,
        collect: function (this: Counter) {
          this.reset();
          const written = run()?.written() ?? [];
          for (const stream of streams) {
            for (const format of stream.formats) {
              const files = written.filter((file) => file.stream === stream.name && file.format === format);
              this.inc({ ...labelsOf(stream), format }, files.reduce((sum, file) => sum + of(file), 0));
            }
          }
        },
      });
    const run = () => this.run;
    perFormat('rows_written_total', 'Rows in the shards this run committed.', (file) => file.rows);
    perFormat('bytes_written_total', 'Bytes of the shards this run committed.', (file) => file.bytes);
    perFormat('files_written_total', 'Shards this run committed.', () => 1);
    const perStream = (name: string, help: string, value: (progress: StreamProgress) => number) =>
      new Gauge({
        name: `${PREFIX}${name}`,
        help,
        labelNames: ['export', 'stream'],
        registers,
        collect: function (this: Gauge) {
          this.reset();
          const progress = run()?.streams() ?? [];
          for (const stream of streams) {
            const own = progress.find((p) => p.name === stream.name);
            if (own !== undefined) this.set(labelsOf(stream), value(own));
          }
        },
      });
    perStream('partitions', 'Partitions this run reads of the stream.', (progress) => progress.partitions);
    perStream('partitions_done', 'Partitions of the stream this run has read to the end.', (progress) => progress.done);
    return registry;
  }
}
