import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { errorFields, type Logger } from '../../log.js';
import type { OutputStore } from '../../output/index.js';
import { RateWindow } from '../../util/rate-window.js';
import type { PartitionPlan } from '../partition/index.js';
import type { StreamProgress } from './run-progress.js';
import { type Checkpoint, type LiveProgress, pairKey, progressKeyOf, readLiveProgress, streamOf } from '../state/index.js';

/** How often at most the progress file is replaced (ms): fresh enough for status, one PUT per 5 s on a bucket. */
export const PROGRESS_EVERY_MS = 5_000;

export interface LiveProgressOptions {
  /** How often at most the file is replaced, in ms (default PROGRESS_EVERY_MS). */
  everyMs?: number;
  /** The clock of `updatedAt`, epoch ms (default Date.now). */
  now?: () => number;
  /** The run's streams as its progress counts them, for their figures in the file; none without. */
  streams?: () => readonly StreamProgress[];
}

/**
 * The progress file a run keeps beside its lock while it drains (state/live-progress.ts): each
 * partition it drains and the rows read of it so far. Rows are counted in memory as they are
 * read; the file is replaced when the first rows are read, then only when they changed, at most
 * every `everyMs`. A failed write is a warning (once), never a failure of the run. `stop` removes
 * the file, after reading it back to prove it is still this run's.
 */
export class LiveProgressFile {
  readonly key: string;
  private readonly rows = new Map<string, number>();
  /** Each stream's rows per second over the last writes. */
  private readonly rates = new Map<string, RateWindow>();
  private readonly token = randomBytes(8).toString('hex');
  private readonly startedAt: string;
  private readonly now: () => number;
  private dirty = true;
  private readAny = false;
  private stopped = false;
  private warned = false;
  private writing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: OutputStore,
    lockKey: string,
    plans: readonly PartitionPlan[],
    checkpoint: Checkpoint,
    private readonly logger: Logger,
    private readonly options: LiveProgressOptions = {},
  ) {
    this.key = progressKeyOf(lockKey);
    this.now = options.now ?? Date.now;
    this.startedAt = new Date(this.now()).toISOString();
    for (const plan of plans) {
      const part = streamOf(checkpoint, plan.stream.name).parts[String(plan.m)];
      if (part?.done !== true) this.rows.set(pairKey(plan.stream.name, plan.m), part?.rows ?? 0);
    }
  }

  /** Writes the file (every partition fetching, with the rows committed so far), then keeps it fresh. */
  async start(): Promise<void> {
    await this.flush();
    this.timer = setInterval(() => void this.write(), this.options.everyMs ?? PROGRESS_EVERY_MS);
    this.timer.unref();
  }

  onRows(plan: PartitionPlan, count: number): void {
    const key = pairKey(plan.stream.name, plan.m);
    const rows = this.rows.get(key);
    if (rows === undefined) return;
    this.rows.set(key, rows + count);
    this.dirty = true;
    // The first rows read are written at once, so that status shows rows from the first page on.
    if (!this.readAny) {
      this.readAny = true;
      void this.write();
    }
  }

  /** The partition is no longer drained by this run: done, failed or interrupted. */
  onEnded(plan: PartitionPlan): void {
    if (this.rows.delete(pairKey(plan.stream.name, plan.m))) this.dirty = true;
  }

  /** Replaces the file if anything changed since the last write (after the write under way, if any). */
  flush(): Promise<void> {
    return this.writing === undefined ? this.write() : this.writing.then(() => this.flush());
  }

  /** One write at a time: none while one is under way (the timer's next tick catches up). */
  private write(): Promise<void> {
    if (this.writing !== undefined || !this.dirty || this.stopped) return this.writing ?? Promise.resolve();
    this.dirty = false;
    const text = `${JSON.stringify(this.content())}\n`;
    this.writing = this.store
      .putText(this.key, text)
      .catch((error: unknown) => this.warn(error, 'could not write the progress file; status shows the checkpoint\'s figures'))
      .finally(() => {
        this.writing = undefined;
      });
    return this.writing;
  }

  /** Stops writing and removes the file if it is still this run's (another's is left as it is). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.writing;
    try {
      const text = await this.store.getText(this.key);
      if (text === undefined) return;
      const read = readLiveProgress(text, this.store.where(this.key));
      if ('progress' in read && read.progress.token === this.token) await this.store.remove([this.key]);
    } catch (error) {
      this.warn(error, 'could not remove the progress file; status takes it as stopped once this run is gone');
    }
  }

  private content(): LiveProgress {
    return {
      version: 1,
      pid: process.pid,
      host: hostname(),
      startedAt: this.startedAt,
      token: this.token,
      updatedAt: new Date(this.now()).toISOString(),
      parts: Object.fromEntries([...this.rows].map(([key, rows]) => [key, { rows }])),
      ...(this.options.streams === undefined ? {} : { streams: this.streamFigures(this.options.streams()) }),
    };
  }

  /** Each stream's figures now, its rate over the writes of the last 30 s. */
  private streamFigures(streams: readonly StreamProgress[]): NonNullable<LiveProgress['streams']> {
    const at = this.now();
    return Object.fromEntries(
      streams.map((s) => {
        const rate = this.rates.get(s.name) ?? this.rates.set(s.name, new RateWindow()).get(s.name)!;
        const perSecond = rate.add(at, s.rows);
        const figures = {
          rows: s.rows,
          ...(perSecond === undefined ? {} : { rowsPerSecond: Math.max(0, Math.round(perSecond)) }),
          ...(s.total === undefined ? {} : { total: s.total }),
          ...(s.series === undefined ? {} : { series: s.series }),
          ...(s.seriesTotal === undefined ? {} : { seriesTotal: s.seriesTotal }),
        };
        return [s.name, figures];
      }),
    );
  }

  private warn(error: unknown, message: string): void {
    if (this.warned) return;
    this.warned = true;
    this.logger.warn({ key: this.store.where(this.key), ...errorFields(error, this.logger) }, message);
  }
}
