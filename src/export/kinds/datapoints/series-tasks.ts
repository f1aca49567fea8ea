import type { AskedQuery, SeriesAnswer, SeriesRef } from './points-answer.js';
import { seriesRefKey } from '../../state/index.js';

/** The platform's limits of one request: queries, and points over all of them (PLATFORM.md). */
export const MAX_QUERIES = 100;
export const MAX_RAW_POINTS = 100_000;
export const MAX_AGGREGATES = 10_000;
/** Empty answers in a row, each with a cursor, after which a series' chain is a broken server's. */
export const MAX_EMPTY_ANSWERS = 100;
/**
 * A series that still holds more than this many requests' worth of points, with few series left
 * to read beside it, is split into windows of time read in parallel (at most MAX_PIECES).
 */
export const SPLIT_REQUESTS = 3;
export const MAX_PIECES = 8;

/**
 * A series of the partition not done yet (or a window of one: a piece of a long series), and its
 * query chain when one is going.
 */
export interface SeriesTask {
  ref: SeriesRef;
  /** The task's window of point times: start inclusive, end exclusive. */
  start: number;
  end: number;
  /** The last point (or bucket) appended to a shard; null: none yet. Where a restart resumes after. */
  written: number | null;
  chain: QueryChain | undefined;
  /** In a request not answered yet: no other request may ask for it meanwhile. */
  asked: boolean;
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

/** The window of point times and how the tasks are read. */
export interface TaskWindow {
  start: number;
  end: number;
  /** Aggregates, not raw points: at most MAX_AGGREGATES a request; never split (a bucket would straddle pieces). */
  aggregates: boolean;
}

/** A query of the next request, with its task. */
export type PlannedQuery = { task: SeriesTask; query: AskedQuery & { cursor: string | undefined } };

/**
 * The series of a partition in flight, packed into requests: at most MAX_QUERIES queries, whose
 * limits add up to at most the request's total. A chain keeps its limit while it follows its
 * cursor (a cursor is bound to its query); series join as others finish, sharing what is free.
 * When no series waits and some chains hold far less than an even share (the many became few),
 * they are started again by time (`start` after their last point), each with the even share: exact,
 * as a series' timestamps are unique and increasing. Several requests may be in flight at once,
 * each with its own tasks.
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

  /** A series to read (or a piece of one: its own start and end), resuming after `written`. */
  add(ref: SeriesRef, written: number | null, piece?: { start: number; end: number }): void {
    const { start, end } = piece ?? this.window;
    this.tasks.push({ ref, start, end, written, chain: undefined, asked: false, finished: false });
  }

  /** Series that wait for a chain: more are listed only when few wait. */
  get waiting(): number {
    return this.tasks.filter((task) => !task.finished && task.chain === undefined).length;
  }

  get open(): number {
    return this.tasks.filter((task) => !task.finished).length;
  }

  /** Whether a task is left that no request in flight holds: another request can go. */
  get askable(): boolean {
    return this.tasks.some((task) => !task.finished && !task.asked);
  }

  /**
   * How many series of `tasks` are now read to their end: each whose every task is finished, so
   * that the windows of a long series read in pieces count as one series, once, when the last
   * of them ends.
   */
  seriesEnded(tasks: readonly SeriesTask[]): number {
    const ended = new Set(tasks.filter((task) => task.finished).map((task) => seriesRefKey(task.ref)));
    for (const task of this.tasks) if (!task.finished) ended.delete(seriesRefKey(task.ref));
    return ended.size;
  }

  /** Whether a task is a piece of its series: its window is not the stream's. */
  isPiece(task: SeriesTask): boolean {
    return task.start !== this.window.start || task.end !== this.window.end;
  }

  /**
   * The queries of the next request, among the tasks no request in flight holds, marked asked;
   * empty when none is left to ask for. `spread`: the requests that may go now, among which the
   * free tasks are shared, so that a few long ones go one or two a request, in parallel.
   */
  nextQueries(spread = 1): PlannedQuery[] {
    const free = this.tasks.filter((task) => !task.finished && !task.asked);
    const most = Math.min(MAX_QUERIES, Math.ceil(free.length / Math.max(1, spread)));
    const going = free.filter((task) => task.chain !== undefined).slice(0, most);
    const waiting = free.filter((task) => task.chain === undefined);
    if (waiting.length === 0 && going.length > 0) {
      const even = Math.floor(this.total / going.length);
      for (const task of going) if (task.chain!.limit * 2 <= even) this.restart(task, even);
    }
    // Chains whose limits fit in one request go; the others wait for the next one.
    const live: SeriesTask[] = [];
    let room = this.total;
    for (const task of going) {
      if (task.finished || task.chain!.limit > room) continue;
      live.push(task);
      room -= task.chain!.limit;
    }
    const joining = waiting.slice(0, Math.min(most - live.length, Math.floor(room / this.least)));
    for (const [i, task] of joining.entries()) {
      const share = Math.floor(room / (joining.length - i));
      if (!this.restart(task, share)) continue;
      room -= share;
      live.push(task);
    }
    return live.map((task) => {
      task.asked = true;
      const { start, limit, cursor, last } = task.chain!;
      return { task, query: { ref: task.ref, start, end: task.end, limit, last, cursor } };
    });
  }

  /**
   * Takes in a series' answer: where its chain stands, and whether it is finished. A raw series
   * far from its end, answered a full page while few series are left, is split (split()).
   */
  answered(task: SeriesTask, answer: SeriesAnswer): void {
    const chain = task.chain!;
    const { points } = answer;
    task.asked = false;
    const first = points.length > 0 ? points.timestamp(0) : undefined;
    if (points.length > 0) chain.last = points.timestamp(points.length - 1);
    chain.empty = points.length === 0 && answer.nextCursor !== undefined ? chain.empty + 1 : 0;
    chain.cursor = answer.nextCursor;
    if (answer.nextCursor === undefined) {
      task.finished = true;
      return;
    }
    if (first !== undefined && points.length >= chain.limit) this.split(task, first, chain.last!, points.length);
  }

  /** A request failed: its tasks may be asked for again (by the next run: the partition stops). */
  unasked(tasks: readonly SeriesTask[]): void {
    for (const task of tasks) task.asked = false;
  }

  /** Drops the tasks that are finished and written: they need no place in the checkpoint. */
  forgetFinished(): void {
    for (let i = this.tasks.length - 1; i >= 0; i--) if (this.tasks[i]!.finished) this.tasks.splice(i, 1);
  }

  /**
   * Splits the rest of a long raw series into windows of equal time when it holds more than
   * SPLIT_REQUESTS requests' worth of points at the density its last answer showed, and fewer
   * tasks are open than one request can hold (so that its requests would go one by one): the task
   * keeps the first window (started again by time), new tasks read the others.
   */
  private split(task: SeriesTask, first: number, last: number, count: number): void {
    if (this.window.aggregates || this.open >= MAX_QUERIES) return;
    const density = count / Math.max(1, last - first + 1);
    const remaining = density * (task.end - last - 1);
    const pieces = Math.min(MAX_PIECES, Math.floor(remaining / (SPLIT_REQUESTS * this.total)) + 1);
    if (pieces < 2) return;
    const from = last + 1;
    const width = Math.ceil((task.end - from) / pieces);
    if (width < 2) return;
    for (let p = pieces - 1; p >= 1; p--) {
      const start = from + p * width;
      if (start < task.end) this.add(task.ref, null, { start, end: Math.min(task.end, start + width) });
    }
    task.end = from + width;
    // Its cursor is bound to the old end: its chain goes on by time, after its last point answered.
    task.chain = { start: from, limit: task.chain!.limit, cursor: undefined, last, empty: 0 };
  }

  /**
   * Starts a task's chain anew by time, after its last point answered (or written), with `limit`.
   * False, and the task finished, when nothing of its window is left after that point.
   */
  private restart(task: SeriesTask, limit: number): boolean {
    const last = task.chain?.last ?? task.written;
    // Aggregates: the platform aligns `start` down to a whole unit, so the bucket of `last` comes
    // again first; readAnswer drops it (SeriesAnswer.points holds only what comes after `last`).
    const start = last === null ? task.start : last + 1;
    if (start >= task.end) {
      task.finished = true;
      task.chain = undefined;
      return false;
    }
    task.chain = { start, limit, cursor: undefined, last, empty: 0 };
    return true;
  }
}
