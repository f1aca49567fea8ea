import type { AskedQuery, SeriesAnswer, SeriesRef } from './points-answer.js';

/** The platform's limits of one request: queries, and points over all of them (PLATFORM.md). */
export const MAX_QUERIES = 100;
export const MAX_RAW_POINTS = 100_000;
export const MAX_AGGREGATES = 10_000;

/** A series of the partition not done yet, and its query chain when one is going. */
export interface SeriesTask {
  ref: SeriesRef;
  /** The last point (or bucket) appended to a shard; null: none yet. Where a restart resumes after. */
  written: number | null;
  chain: QueryChain | undefined;
  /** Its last point was answered (appended or still to append); nothing more to ask. */
  finished: boolean;
}

/** One series' cursor chain: a query's fixed start and limit, and where it stands. */
export interface QueryChain {
  start: number;
  limit: number;
  cursor: string | undefined;
  /** The last timestamp answered in this chain (or before it began): answers must come after it. */
  last: number | null;
  /** Answers in a row without points that still carried a cursor: a server that never ends. */
  empty: number;
}

/** Empty answers in a row, each with a cursor, after which a series' chain is a broken server's. */
export const MAX_EMPTY_ANSWERS = 100;

/** The window of point times and how the tasks are read. */
export interface TaskWindow {
  start: number;
  end: number;
  /** Aggregates, not raw points: at most MAX_AGGREGATES a request. */
  aggregates: boolean;
}

/**
 * The series of a partition in flight, packed into requests: at most MAX_QUERIES queries, whose
 * limits add up to at most the request's total. A chain keeps its limit while it follows its
 * cursor (a cursor is bound to its query); series join as others finish, sharing what is free.
 * When no series waits and some chains hold far less than an even share (the many became few),
 * they are started again by time (`start` after their last point), each with the even share: exact,
 * as a series' timestamps are unique and increasing.
 */
export class SeriesTasks {
  readonly tasks: SeriesTask[] = [];
  private readonly total: number;
  /** The least share a series joins with, so that a request is never spread thinner. */
  private readonly least: number;

  constructor(private readonly window: TaskWindow) {
    this.total = window.aggregates ? MAX_AGGREGATES : MAX_RAW_POINTS;
    this.least = this.total / MAX_QUERIES;
  }

  add(ref: SeriesRef, written: number | null): void {
    this.tasks.push({ ref, written, chain: undefined, finished: false });
  }

  /** Series that wait for a chain: more are listed only when few wait. */
  get waiting(): number {
    return this.tasks.filter((task) => !task.finished && task.chain === undefined).length;
  }

  get open(): number {
    return this.tasks.filter((task) => !task.finished).length;
  }

  /** The queries of the next request, with their tasks; empty when every series is finished. */
  nextQueries(): { task: SeriesTask; query: AskedQuery & { cursor: string | undefined } }[] {
    const going = this.tasks.filter((task) => !task.finished && task.chain !== undefined);
    const waiting = this.tasks.filter((task) => !task.finished && task.chain === undefined);
    if (waiting.length === 0 && going.length > 0) {
      const even = Math.floor(this.total / Math.min(going.length, MAX_QUERIES));
      for (const task of going) if (task.chain!.limit * 2 <= even) this.restart(task, even);
    }
    let free = this.total - going.reduce((sum, task) => sum + task.chain!.limit, 0);
    const joining = waiting.slice(0, Math.min(MAX_QUERIES - going.length, Math.floor(free / this.least)));
    for (const [i, task] of joining.entries()) {
      const share = Math.floor(free / (joining.length - i));
      if (!this.restart(task, share)) continue;
      free -= share;
      going.push(task);
    }
    return going
      .filter((task) => !task.finished)
      .slice(0, MAX_QUERIES)
      .map((task) => {
        const { start, limit, cursor, last } = task.chain!;
        return { task, query: { ref: task.ref, start, end: this.window.end, limit, last, cursor } };
      });
  }

  /** Takes in a series' answer: where its chain stands, and whether it is finished. */
  answered(task: SeriesTask, answer: SeriesAnswer): void {
    const chain = task.chain!;
    const { points } = answer;
    if (points.length > 0) chain.last = points.timestamp(points.length - 1);
    chain.empty = answer.points.length === 0 && answer.nextCursor !== undefined ? chain.empty + 1 : 0;
    chain.cursor = answer.nextCursor;
    if (answer.nextCursor === undefined) task.finished = true;
  }

  /** Drops the tasks that are finished and written: they need no place in the checkpoint. */
  forgetFinished(): void {
    for (let i = this.tasks.length - 1; i >= 0; i--) if (this.tasks[i]!.finished) this.tasks.splice(i, 1);
  }

  /**
   * Starts a series' chain anew by time, after its last point answered (or written), with `limit`.
   * False, and the series finished, when nothing of the window is left after that point.
   */
  private restart(task: SeriesTask, limit: number): boolean {
    const last = task.chain?.last ?? task.written;
    // Aggregates: the platform aligns `start` down to a whole unit, so the bucket of `last` comes
    // again first; readAnswer drops it (SeriesAnswer.points holds only what comes after `last`).
    const start = last === null ? this.window.start : last + 1;
    if (start >= this.window.end) {
      task.finished = true;
      task.chain = undefined;
      return false;
    }
    task.chain = { start, limit, cursor: undefined, last, empty: 0 };
    return true;
  }
}
