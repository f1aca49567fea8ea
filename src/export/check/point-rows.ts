import type { Format } from '../../config/job-schema.js';
import { bucketReachMs } from '../../resources/index.js';
import type { ManifestFile, StreamState } from '../state/index.js';

/** The point times a datapoints stream's run reads, start inclusive, end exclusive (the manifest's `pointWindow`). */
export interface PointWindow {
  start: number;
  end: number;
}

/** How a stream's rows are bucketed: none for raw points; else its granularity and time zone. */
export interface RowBuckets {
  granularity: string;
  timeZone: string | undefined;
}

/**
 * The earliest time a row may have: `start` for raw points; for aggregates later than the reach
 * of a bucket before it (bucketReachMs, the bound the drain holds answers to), as the platform
 * starts the first bucket at `start` rounded down to a whole unit.
 */
function earliestOf(window: PointWindow, buckets: RowBuckets | undefined): { at: number; what: string } {
  if (buckets === undefined) return { at: window.start, what: 'the window\'s start' };
  const { granularity, timeZone } = buckets;
  // A granularity the manifest should not hold is given the widest reach: a month's.
  const known = /^\d+(s|m|h|d|mo)$/.test(granularity);
  const reach = bucketReachMs(known ? granularity : '1mo', timeZone);
  return { at: window.start - reach + 1, what: `the ${granularity} bucket that holds the window's start` };
}

/** A series in flight in a partition (or a piece of one), and its latest time read back, per format. */
interface Tracked {
  /** How messages name it: `id 12` or `externalId "x"`. */
  ref: string;
  start: number;
  end: number;
  after: number | null;
  latest: Map<Format, number>;
}

/** Takes a row of a shard: its series, its time, and its node's key where rows carry it. */
export type PointRowReader = (
  id: unknown,
  externalId: unknown,
  timestamp: unknown,
  space?: unknown,
  nodeId?: unknown,
) => void;

/** The first row of a shard outside the window, and how many are. */
interface Outside {
  rows: number;
  row: number;
  series: unknown;
  timestamp: unknown;
}

/**
 * The rows of one run of a datapoints stream, checked as `verify` reads its shards back, in every
 * format: each row's time lies in the run's window (a raw point in [start, end); an aggregate
 * bucket from the one that holds `start`), and a shard with a row outside is named with its first
 * such row. For the run the checkpoint is at, each series it has in flight must have, in its
 * partition's shards the checkpoint counts, its latest time equal to its `after` (within its own
 * window, for a piece of a long series; none at all when `after` is null): a resume reads the
 * series from just after `after`, so any other latest time loses or repeats points. A series held
 * by its instanceId is matched by the rows' `instanceSpace` and `instanceExternalId` (the columns
 * of a stream of data-model series: `instanceColumns`).
 *
 * Memory: one entry per shard with a row outside, and per series the checkpoint holds in flight.
 */
export class PointRowCheck {
  private readonly earliest: { at: number; what: string } | undefined;
  private readonly outside = new Map<ManifestFile, Outside>();
  /** By partition m: the series in flight, by `id:<id>`, `externalId:<externalId>` or nodeKey. */
  private readonly tracked = new Map<number, Map<string, Tracked[]>>();
  private readonly formats = new Set<Format>();

  /**
   * `state`: the stream's state in the checkpoint when its current run is the one checked (its
   * series in flight are compared with the shards), else undefined.
   */
  constructor(
    private readonly stream: string,
    private readonly window: PointWindow | undefined,
    buckets: RowBuckets | undefined,
    private readonly state: StreamState | undefined,
    /** The rows carry their series' node key (PointsShape.instanceColumns): the reader takes it too. */
    readonly instanceColumns = false,
  ) {
    this.earliest = window === undefined ? undefined : earliestOf(window, buckets);
    for (const [m, part] of Object.entries(state?.parts ?? {})) {
      const bySeries = new Map<string, Tracked[]>();
      for (const series of part.points?.series ?? []) {
        const { id, externalId, instanceId } = series;
        // A series held by its instanceId is matched by the rows' node key, which only such a stream's rows carry.
        if (id === undefined && externalId === undefined && !instanceColumns) continue;
        const key = id !== undefined
          ? `id:${id}`
          : externalId !== undefined ? `externalId:${externalId}` : nodeKey(instanceId?.space, instanceId?.externalId);
        const ref = id !== undefined
          ? `id ${id}`
          : externalId !== undefined
            ? `externalId ${JSON.stringify(externalId)}`
            : `instanceId ${JSON.stringify(instanceId)}`;
        const tracked: Tracked = {
          ref,
          start: series.start ?? Number.NEGATIVE_INFINITY,
          end: series.end ?? Number.POSITIVE_INFINITY,
          after: series.after,
          latest: new Map(),
        };
        bySeries.set(key, [...(bySeries.get(key) ?? []), tracked]);
      }
      if (bySeries.size > 0) this.tracked.set(Number(m), bySeries);
    }
  }

  /**
   * What checks each row of `file`: its series (id, externalId; and its node's space and
   * externalId, with instanceColumns) and timestamp, in the order of the shard.
   */
  reader(file: ManifestFile): PointRowReader {
    this.formats.add(file.format);
    // Only the shards the checkpoint counts: a crash may leave the manifest one shard ahead of it.
    const counted = file.seq < (this.state?.parts[String(file.m)]?.nextSeq ?? 0);
    const bySeries = counted ? this.tracked.get(file.m) : undefined;
    let row = 0;
    return (id, externalId, timestamp, space, nodeId) => {
      row++;
      const time = typeof timestamp === 'number' ? timestamp : typeof timestamp === 'bigint' ? Number(timestamp) : Number.NaN;
      if (!this.inWindow(time)) {
        const found = this.outside.get(file);
        if (found === undefined) this.outside.set(file, { rows: 1, row, series: id ?? externalId, timestamp });
        else found.rows++;
      }
      if (bySeries === undefined) return;
      const byId = bySeries.get(`id:${String(id)}`);
      const byExternalId = typeof externalId === 'string' ? bySeries.get(`externalId:${externalId}`) : undefined;
      const byNode = typeof space === 'string' && typeof nodeId === 'string' ? bySeries.get(nodeKey(space, nodeId)) : undefined;
      const tasks = byId ?? byExternalId ?? byNode;
      for (const task of tasks ?? []) {
        if (time < task.start || time >= task.end) continue;
        const latest = task.latest.get(file.format);
        if (latest === undefined || time > latest) task.latest.set(file.format, time);
      }
    };
  }

  /** One line per shard with a row outside the window, and per series in flight whose latest time is not `after`. */
  problems(): string[] {
    const problems: string[] = [];
    for (const [file, found] of this.outside) problems.push(this.outsideProblem(file, found));
    for (const [m, bySeries] of this.tracked) {
      for (const tasks of bySeries.values()) {
        for (const task of tasks) {
          for (const format of this.formats) {
            const latest = task.latest.get(format) ?? null;
            if (latest === task.after) continue;
            problems.push(this.seriesProblem(m, format, task, latest));
          }
        }
      }
    }
    return problems;
  }

  private inWindow(time: number): boolean {
    if (this.window === undefined || this.earliest === undefined) return true;
    return time >= this.earliest.at && time < this.window.end;
  }

  private outsideProblem(file: ManifestFile, found: Outside): string {
    const window = this.window!;
    const { at, what } = this.earliest!;
    const time = Number(found.timestamp);
    const where = Number.isNaN(time) ? `has no timestamp (${JSON.stringify(String(found.timestamp))})` : time < at ? `lies before ${what}` : 'lies at or after the window\'s end';
    const shown = Number.isNaN(time) ? '' : `, ${timeText(time)}`;
    const more = found.rows > 1 ? `; ${found.rows.toLocaleString('en-US')} rows of the shard lie outside it` : '';
    return `${file.path}: row ${found.row} (series ${String(found.series)}${shown}) ${where}: ${this.stream} reads [${timeText(window.start)}, ${timeText(window.end)}) (the manifest's pointWindow)${more}`;
  }

  private seriesProblem(m: number, format: Format, task: Tracked, latest: number | null): string {
    const partitions = this.state?.partitions ?? 0;
    const piece = Number.isFinite(task.start) ? ` (its window [${timeText(task.start)}, ${timeText(task.end)}))` : '';
    const recorded = task.after === null ? 'none of its points committed' : `its points committed up to ${timeText(task.after)}`;
    const found = latest === null ? 'none of its points' : `points up to ${timeText(latest)}`;
    return `${this.stream} partition ${m}/${partitions} (${format}): the checkpoint has series ${task.ref}${piece} in flight with ${recorded}, but the partition's shards hold ${found}: a resume would lose or repeat points`;
  }
}

/** A node's key as the tracked series are keyed by it. */
function nodeKey(space: string | undefined, externalId: string | undefined): string {
  return `instance:${JSON.stringify([space, externalId])}`;
}

/** A point time as ISO 8601 and epoch ms; the ms alone outside the dates JavaScript can show. */
function timeText(time: number): string {
  const date = new Date(time);
  return Number.isNaN(date.getTime()) ? String(time) : `${date.toISOString()} (${time})`;
}
