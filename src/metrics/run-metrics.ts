import { collectDefaultMetrics, Registry } from 'prom-client';
import type { RunHandle } from '../export/index.js';
import type { EarlierRuns, MetricsStream, RunFacts } from './run-facts.js';
import { defineRunWideMetrics } from './run-wide-metrics.js';
import { defineStreamMetrics } from './stream-metrics.js';

export type { EarlierRuns, MetricsStream } from './run-facts.js';

/**
 * The Prometheus metrics of one run, read from the running export whenever they are collected
 * (nothing is counted twice: the figures are the client's, the budget's and the manifest's own).
 * The run-wide metrics, with prom-client's `process_*` and `nodejs_*` ones, are in one registry and
 * each stream's in its own, so that a Pushgateway push groups them by job and by stream;
 * `merged()` holds them all, for a textfile or `/metrics`.
 *
 * Counters count this run only: a new process starts them at zero, as Prometheus expects of a
 * restarted target. The last run's figures (its end, exit code, error code, the last success)
 * start from the earlier runs and change when this one finishes, so that from its start until its
 * end a run shows a start newer than the last end: should it die, that stays.
 */
export class RunMetrics implements RunFacts {
  readonly job = new Registry();
  /** Each stream's metrics alone, for a Pushgateway group of its own. */
  readonly streams = new Map<string, Registry>();
  /** Every stream's metrics (prom-client merges registries only when no metric name repeats). */
  private readonly allStreams = new Registry();
  private handle: RunHandle | undefined;
  private ended: number | undefined;
  private lastRun: EarlierRuns;
  private ends: ReadonlyMap<string, number> = new Map();
  readonly deadlineMs: number | undefined;

  constructor(
    readonly exportLabel: string,
    streams: readonly MetricsStream[],
    earlier: EarlierRuns,
    readonly startedAtMs: number,
    readonly now: () => number = Date.now,
    /** metrics.runDeadline: how long this run may last, ms. */
    runDeadlineMs?: number,
  ) {
    this.deadlineMs = runDeadlineMs === undefined ? undefined : startedAtMs + runDeadlineMs;
    this.lastRun = { ...earlier };
    defineRunWideMetrics(this.job, this);
    collectDefaultMetrics({ register: this.job, labels: { export: exportLabel } });
    defineStreamMetrics(this.allStreams, this, streams);
    for (const stream of streams) this.streams.set(stream.name, defineStreamMetrics(new Registry(), this, [stream]));
  }

  get run(): RunHandle | undefined {
    return this.handle;
  }

  get endedAtMs(): number | undefined {
    return this.ended;
  }

  get last(): Readonly<EarlierRuns> {
    return this.lastRun;
  }

  get dataEnds(): ReadonlyMap<string, number> {
    return this.ends;
  }

  /** Starts reading the export's figures (once it drains). */
  attach(run: RunHandle): void {
    this.handle = run;
  }

  /** The data ends of the streams, as the output says now (read at the start and at the end of a run). */
  setDataEnds(ends: ReadonlyMap<string, number>): void {
    this.ends = ends;
  }

  /**
   * The run ended with `exitCode` and the error `code` (none: without one) at `endedAtMs` (default
   * now; the run's `finishedAt`, so that the last success equals its record's): its duration stops,
   * and it becomes the last run. It is the last success only if it exited 0 and `jobComplete`: the
   * whole job complete, never one worker's share of a split job that others have yet to finish.
   */
  finish(exitCode: number, endedAtMs = this.now(), code = 'none', jobComplete = exitCode === 0): void {
    this.ended = endedAtMs;
    this.lastRun = {
      lastExitCode: exitCode,
      lastEndMs: endedAtMs,
      lastCode: code,
      lastSuccessMs: exitCode === 0 && jobComplete ? endedAtMs : this.lastRun.lastSuccessMs,
    };
  }

  /** Every metric in one registry. */
  merged(): Registry {
    return Registry.merge([this.job, this.allStreams]);
  }
}
