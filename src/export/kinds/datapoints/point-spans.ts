import { PointList } from '../../../sink/index.js';

/**
 * The bytes a plain point usually takes: `{"timestamp":<13 digits>,"value":<number>},` is 32 with a
 * one-digit value and about 50 with a measured one. Arrays sized for the shortest would allocate
 * half again what an answer needs; an answer of shorter points moves its arrays once.
 */
const PLAIN_POINT_BYTES = 48;

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

  constructor(private readonly body: Buffer) {
    // Room for the plain points a body of this size usually holds: most answers allocate their arrays once.
    const room = Math.max(1024, Math.ceil(body.length / PLAIN_POINT_BYTES));
    this.bounds = new Int32Array(2 * room);
    this.times = new Float64Array(room);
    this.plain = new Int32Array(room);
  }

  /** Keeps the next point of the series being read. */
  keep(start: number, end: number, timestamp: number, plainValue: number): void {
    const k = this.kept++;
    let at = this.used + k;
    if (at === this.times.length) {
      // Series read before keep their views of the arrays they lie in; this one moves to new ones.
      const { used } = this;
      const size = 2 * Math.max(k, this.times.length);
      this.bounds = moved(this.bounds.subarray(2 * used, 2 * at), new Int32Array(2 * size));
      this.times = moved(this.times.subarray(used, at), new Float64Array(size));
      this.plain = moved(this.plain.subarray(used, at), new Int32Array(size));
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
}

function moved<T extends Int32Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
