import { PointList } from '../../../sink/index.js';
import { freeOwned, markOwned } from '../../../util/owned-memory.js';

/**
 * The fewest bytes a point with a value takes in an answer: `{"timestamp":0,"sum":0}` and a comma.
 * A body holds at most its length over this many of them (points of fewer bytes move the arrays).
 */
const SHORTEST_POINT_BYTES = 24;
/** Room for points an answer's arrays have at least. */
const LEAST_ROOM = 64;

/**
 * Where the points of one answer's series lie in its body (points-scan.ts): the start and end of
 * each point kept, its timestamp, and where the value of a plain point starts (PointList.plainValue;
 * -1 for the others). Each series' PointList takes views of these arrays, the series being read
 * from `used` on, so that an answer allocates a few arrays, not three per series.
 */
export class PointSpans {
  private bounds: Int32Array;
  private times: Float64Array;
  private plain: Int32Array;
  private used = 0;
  /** Points kept of the series being read. */
  private kept = 0;
  /** Every array made, the ones moved from included: free() frees them all. */
  private readonly made: (Int32Array | Float64Array)[] = [];

  /**
   * `most`: the points the answer may hold, the sum of its queries' limits (the scan refuses a
   * series past its limit). The arrays are sized once for the fewer of that and what the body can
   * hold, so that they never move: sized by a typical point's bytes instead, an answer of short
   * points moved its arrays to twice that size, and held both (the series read before the move keep
   * views of the first), 2.5 times the 20 bytes a point needs; with its body, answers then held
   * 2.25 times the bytes the budget counts for them (bench/RESULTS.md, issue 46).
   */
  constructor(
    private readonly body: Buffer,
    most: number,
  ) {
    const room = Math.max(LEAST_ROOM, Math.min(most, Math.ceil(body.length / SHORTEST_POINT_BYTES)));
    this.bounds = this.make(new Int32Array(2 * room));
    this.times = this.make(new Float64Array(room));
    this.plain = this.make(new Int32Array(room));
  }

  /** Keeps the next point of the series being read. */
  keep(start: number, end: number, timestamp: number, plainValue: number): void {
    const k = this.kept++;
    let at = this.used + k;
    if (at === this.times.length) {
      // Series read before keep their views of the arrays they lie in; this one moves to new ones.
      const { used } = this;
      const size = 2 * Math.max(k, this.times.length);
      this.bounds = moved(this.bounds.subarray(2 * used, 2 * at), this.make(new Int32Array(2 * size)));
      this.times = moved(this.times.subarray(used, at), this.make(new Float64Array(size)));
      this.plain = moved(this.plain.subarray(used, at), this.make(new Int32Array(size)));
      this.used = 0;
      at = k;
    }
    this.bounds[2 * at] = start;
    this.bounds[2 * at + 1] = end;
    this.times[at] = timestamp;
    this.plain[at] = plainValue;
  }

  /** The points kept since the last call, as one series' list; the next series starts after them. */
  take(): PointList {
    const { used, kept } = this;
    this.used += kept;
    this.kept = 0;
    return PointList.scanned(
      this.body,
      this.bounds.subarray(2 * used, 2 * (used + kept)),
      this.times.subarray(used, used + kept),
      this.plain.subarray(used, used + kept),
    );
  }

  /**
   * Frees the arrays at once rather than at V8's next collection (util/owned-memory.ts). Called
   * once the answer's points are written, or the scan gave up: every PointList taken from here has
   * no points afterwards.
   */
  free(): void {
    for (const array of this.made) freeOwned(array);
    this.made.length = 0;
  }

  private make<T extends Int32Array | Float64Array>(array: T): T {
    this.made.push(array);
    return markOwned(array);
  }
}

function moved<T extends Int32Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
