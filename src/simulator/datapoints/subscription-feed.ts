import type { Datapoint } from './generated-points.js';
import type { DatapointChange } from './point-churn.js';
import type { DeletedRange } from './series-changes.js';

/**
 * The feed of one partition of a subscription: in wall-time order, the points its live series
 * gain as time passes (each arrives at its own timestamp) and the changes `--churn` makes to its
 * series (each at the time it was applied). At one wall time the changes come first, in the order
 * applied, then the arrivals by series: a change applied at time t saw the points before t only,
 * so a point arriving at t comes after it. Each event of the partition at wall time t has a rank
 * there (0, 1, ...), and (t, rank) is a position in the feed that never moves: the feed is read
 * up to a horizon (the clock's now), before which nothing can be added any more: the changes due
 * by now are all applied (those at now included), and the points arriving at now come after them.
 */

/** Where a partition's feed goes on: the first event at or after (time, rank). */
export interface FeedPosition {
  time: number;
  rank: number;
}

/** One event of the feed: points written to a series (arrived, late or corrected) or a range deleted. */
export type FeedEvent = { series: number; time: number } & ({ upserts: Datapoint[] } | { delete: DeletedRange });

/** What the feed is made of: the points' change log and the points arriving in live series. */
export interface FeedSource {
  changes(): readonly DatapointChange[];
  arrivedBetween(index: number, fromMs: number, toMs: number): Generator<Datapoint, void, undefined>;
}

/** One page of a partition's feed: its events, where the next page starts, and whether one is due now. */
export interface FeedPage {
  events: FeedEvent[];
  next: FeedPosition;
  /** Whether an event lies between `next` and the horizon. */
  more: boolean;
}

/**
 * Events of the partition holding `members` from `from` on, up to `horizon`, until they hold
 * at least `limit` points (a change's points come together, so the page may pass it; a deleted
 * range counts as one). `limit` 0 reads none, to learn whether any is there.
 */
export function readFeed(
  source: FeedSource,
  members: readonly number[],
  from: FeedPosition,
  horizon: number,
  limit: number,
): FeedPage {
  const events: FeedEvent[] = [];
  let points = 0;
  const walk = eventsFrom(source, members, from, horizon);
  for (let next = walk.next(); ; next = walk.next()) {
    if (next.done === true) return { events, next: next.value, more: false };
    const { event, rank } = next.value;
    if (points >= limit) return { events, next: { time: event.time, rank }, more: true };
    events.push(event);
    points += 'upserts' in event ? event.upserts.length : 1;
  }
}

/**
 * The partition's events from `from` on, up to `horizon` (the changes at it, no arrival), in feed
 * order, each with its rank; returns the position after the last.
 */
function* eventsFrom(
  source: FeedSource,
  members: readonly number[],
  from: FeedPosition,
  horizon: number,
): Generator<{ event: FeedEvent; rank: number }, FeedPosition, undefined> {
  const memberSet = new Set(members);
  const log = source.changes();
  let c = firstChangeAtOrAfter(log, from.time);
  const arrivals = new ArrivalHeap();
  for (const series of members) arrivals.add(series, source.arrivedBetween(series, from.time, horizon));
  let time = Number.NaN;
  let rank = 0;
  for (;;) {
    while (c < log.length && !memberSet.has(log[c]?.series ?? -1)) c++;
    const change = log[c];
    const arrival = arrivals.peek();
    const changeDue = change !== undefined && change.appliedAt <= horizon;
    if (!changeDue && arrival === undefined) break;
    let event: FeedEvent;
    if (changeDue && (arrival === undefined || change.appliedAt <= arrival.point.timestamp)) {
      event = 'delete' in change
        ? { series: change.series, time: change.appliedAt, delete: change.delete }
        : { series: change.series, time: change.appliedAt, upserts: change.upserts };
      c++;
    } else if (arrival !== undefined) {
      event = { series: arrival.series, time: arrival.point.timestamp, upserts: [arrival.point] };
      arrivals.pop();
    } else {
      break;
    }
    rank = event.time === time ? rank + 1 : 0;
    time = event.time;
    if (time === from.time && rank < from.rank) continue;
    yield { event, rank };
  }
  if (time === horizon) return { time, rank: rank + 1 };
  return { time: horizon, rank: from.time === horizon ? from.rank : 0 };
}

/** The end of a partition's feed at `horizon`: after the changes applied at it, before the points arriving at it. */
export function feedEnd(source: FeedSource, members: readonly number[], horizon: number): FeedPosition {
  const log = source.changes();
  const memberSet = new Set(members);
  let rank = 0;
  for (let c = firstChangeAtOrAfter(log, horizon); c < log.length && log[c]?.appliedAt === horizon; c++) {
    if (memberSet.has(log[c]?.series ?? -1)) rank++;
  }
  return { time: horizon, rank };
}

/** The position in the log (sorted by appliedAt) of the first change applied at or after `time`. */
function firstChangeAtOrAfter(log: readonly DatapointChange[], time: number): number {
  let low = 0;
  let high = log.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((log[middle]?.appliedAt ?? Infinity) < time) low = middle + 1;
    else high = middle;
  }
  return low;
}

interface Arrival {
  series: number;
  point: Datapoint;
  rest: Generator<Datapoint, void, undefined>;
}

/** The next arriving point of each series, earliest first (then by series): a k-way merge of their arrivals. */
class ArrivalHeap {
  private readonly heap: Arrival[] = [];

  add(series: number, points: Generator<Datapoint, void, undefined>): void {
    const first = points.next();
    if (!first.done) this.push({ series, point: first.value, rest: points });
  }

  peek(): Arrival | undefined {
    return this.heap[0];
  }

  /** Takes the earliest arrival off, and puts its series' next one in its place. */
  pop(): void {
    const top = this.heap[0];
    if (top === undefined) return;
    const next = top.rest.next();
    if (!next.done) {
      this.heap[0] = { ...top, point: next.value };
    } else {
      const last = this.heap.pop();
      if (this.heap.length === 0 || last === undefined) return;
      this.heap[0] = last;
    }
    this.down(0);
  }

  private push(arrival: Arrival): void {
    this.heap.push(arrival);
    let at = this.heap.length - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!this.before(at, parent)) break;
      this.swap(at, parent);
      at = parent;
    }
  }

  private down(at: number): void {
    for (;;) {
      const left = 2 * at + 1;
      let least = at;
      if (left < this.heap.length && this.before(left, least)) least = left;
      if (left + 1 < this.heap.length && this.before(left + 1, least)) least = left + 1;
      if (least === at) return;
      this.swap(at, least);
      at = least;
    }
  }

  private before(a: number, b: number): boolean {
    const x = this.heap[a];
    const y = this.heap[b];
    if (x === undefined || y === undefined) return false;
    return x.point.timestamp < y.point.timestamp || (x.point.timestamp === y.point.timestamp && x.series < y.series);
  }

  private swap(a: number, b: number): void {
    const x = this.heap[a];
    const y = this.heap[b];
    if (x === undefined || y === undefined) return;
    this.heap[a] = y;
    this.heap[b] = x;
  }
}
