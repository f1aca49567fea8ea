import type { CommittedShard } from '../shard-writer.js';

/** A point as the platform sent it: `timestamp`, then its value and status, or its aggregates. */
export type PointValue = { readonly timestamp: number } & Readonly<Record<string, unknown>>;

/**
 * The points of one series in one answer, in strictly increasing time: values (an answer that was
 * parsed), or byte ranges of the answer's body as received (an answer that was scanned), each one
 * JSON object on one line. Nothing is parsed until a writer asks for a point's value.
 */
export class PointList {
  readonly length: number;

  private constructor(
    private readonly values: readonly PointValue[] | undefined,
    /** The answer's body the points lie in; undefined for points given as values. */
    readonly body: Buffer | undefined,
    /** Start and end (exclusive) byte offsets of each point in `body`, in pairs. */
    private readonly bounds: ArrayLike<number>,
    private readonly times: ArrayLike<number>,
    /** Per point: where its number value starts, for plainValue. */
    private readonly plain: ArrayLike<number> | undefined,
    private readonly offset: number,
    length: number,
  ) {
    this.length = length;
  }

  static of(values: readonly PointValue[]): PointList {
    return new PointList(values, undefined, [], values.map((point) => point.timestamp), undefined, 0, values.length);
  }

  /**
   * Points lying in `body` at `bounds`, with their `timestamps` read already; and, when the reader
   * knows them, where each one's value starts in the plain case (plainValue), -1 for the others.
   */
  static scanned(
    body: Buffer,
    bounds: ArrayLike<number>,
    timestamps: ArrayLike<number>,
    plain?: ArrayLike<number>,
  ): PointList {
    return new PointList(undefined, body, bounds, timestamps, plain, 0, timestamps.length);
  }

  /** The points from `k` on. */
  after(k: number): PointList {
    const { values, body, bounds, times, plain } = this;
    return new PointList(values, body, bounds, times, plain, this.offset + k, Math.max(0, this.length - k));
  }

  timestamp(k: number): number {
    return this.times[this.offset + k]!;
  }

  /** Point `k` as a value (parsed from its bytes alone, when scanned). */
  value(k: number): PointValue {
    const i = this.offset + k;
    if (this.values !== undefined) return this.values[i]!;
    return JSON.parse(this.body!.toString('utf8', this.bounds[2 * i], this.bounds[2 * i + 1])) as PointValue;
  }

  /** Where point `k` starts in `body` (its opening brace), for scanned points. */
  start(k: number): number {
    return this.bounds[2 * (this.offset + k)]!;
  }

  /** Where point `k` ends in `body` (after its closing brace), for scanned points. */
  end(k: number): number {
    return this.bounds[2 * (this.offset + k) + 1]!;
  }

  /**
   * Where the value of point `k` starts in `body` when the point is `{"timestamp":<integer>,
   * "value":<number>}` to the byte, as the platform writes most points: the value ends before the
   * point's closing brace. -1 for any other point, or when not known.
   */
  plainValue(k: number): number {
    return this.plain === undefined ? -1 : this.plain[this.offset + k]!;
  }

  /** Where point `k` lies in the body as received; undefined for points given as values. */
  bytes(k: number): { body: Buffer; start: number; end: number } | undefined {
    const i = this.offset + k;
    const { body, bounds } = this;
    return body === undefined ? undefined : { body, start: bounds[2 * i]!, end: bounds[2 * i + 1]! };
  }
}

/**
 * The points of one answer of `POST /timeseries/data/list`, per series, checked already
 * (export/kinds/datapoints/points-answer.ts).
 */
export interface SeriesPoints {
  readonly id: number;
  readonly externalId: string | undefined;
  /** The series' data-model node, when it is one (written by a shape with instanceColumns only). */
  readonly instanceId?: { readonly space: string; readonly externalId: string } | undefined;
  readonly isString: boolean;
  readonly points: PointList;
}

export type PointBatch = readonly SeriesPoints[];

/** A shard writer of datapoints: the batches of a partition, as they come. */
export interface PointShardWriter {
  readonly format: 'parquet' | 'ndjson';
  readonly rows: number;
  readonly bytes: number;
  append(batch: PointBatch): Promise<void>;
  commit(): Promise<CommittedShard>;
  abort(): Promise<void>;
}
