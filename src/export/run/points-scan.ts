import type { RequestContext } from '../../http/errors.js';
import type { ScannedPage } from '../../page/index.js';
import { type Aggregate, isCountAggregate } from '../../resources/index.js';
import { PointList } from '../../sink/index.js';
import { ABSENT, PointFields } from '../../sink/datapoints/point-fields.js';
import {
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  JsonBytes,
  LOWER_F,
  LOWER_T,
  MINUS,
  NINE,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  sameBytes,
  ZERO,
} from '../../sink/parquet/json-bytes.js';
import { AnswerMatch, type AskedQuery, readItem, type SeriesAnswer } from './points-answer.js';

/** The members of an item the scan reads, by their index; any other is skipped. */
const HEAD = ['id', 'externalId', 'isString', 'nextCursor', 'datapoints'].map((name) => Buffer.from(name));
const ID = 0;
const EXTERNAL_ID = 1;
const IS_STRING = 2;
const NEXT_CURSOR = 3;
const DATAPOINTS = 4;

/** A point's members the checks read: its timestamp, then `value` and `status`, or the aggregates. */
const TIMESTAMP = 0;
const VALUE = 1;
const STATUS = 2;
const CODE = 0;
const SYMBOL = 1;

/** About the fewest bytes a plain point takes: `{"timestamp":<13 digits>,"value":<number>},`. */
const PLAIN_POINT_BYTES = 32;

const LF = 0x0a;
const CR = 0x0d;

/** Offsets of a body's points are held in Int32Arrays (a body that large is parsed, and refused, as before). */
const MAX_SCANNED_BYTES = 2 ** 31 - 1;

/**
 * readAnswer for an answer whose page scan found its items (`scan`), read from its bytes without
 * building an object per point: each series' points are byte ranges of `body` with their
 * timestamps (PointList.scanned), so that NDJSON lines are the points' own bytes.
 *
 * The scan takes an item only in the plain case, where readAnswer would take it too and give the
 * same series: `id`, `externalId`, `isString` and `nextCursor` given once, without escapes in their
 * keys, before `datapoints`; integers written in digits; every point an object on one line whose
 * checks pass. Any other item, a broken one included, is parsed alone and read by readAnswer's own
 * readItem, which takes it or fails with its message: the scan never names a problem itself.
 */
export function readScannedAnswer(
  body: Buffer,
  scan: ScannedPage,
  queries: readonly AskedQuery[],
  aggregates: readonly Aggregate[] | undefined,
  ctx: RequestContext,
): { series: SeriesAnswer[]; unknown: number[] } {
  const match = new AnswerMatch(queries, aggregates, ctx);
  const reader = body.length <= MAX_SCANNED_BYTES ? new ItemScan(body, scan.lineBreaks, match) : undefined;
  const { bounds } = scan;
  const series: SeriesAnswer[] = [];
  for (let i = 0; i < bounds.length; i += 2) {
    const position = i / 2;
    const scanned = reader?.item(bounds[i]!);
    if (scanned === undefined) {
      series.push(readItem(JSON.parse(body.toString('utf8', bounds[i], bounds[i + 1])), position, match));
    } else {
      // The query the scan found: nothing was taken since.
      match.take(`item ${position + 1}`, scanned.id, scanned.externalId);
      series.push(scanned);
    }
  }
  return { series, unknown: match.unknown() };
}

/** Reads the items of one answer, one at a time (readScannedAnswer). */
class ItemScan extends JsonBytes {
  private readonly point: PointFields;
  private readonly status = new PointFields(['code', 'symbol']);
  /** Per aggregate asked: its name's index in `point`, and whether it is a count (an integer). */
  private readonly aggregateNames: number[];
  private readonly counts: boolean[];
  /**
   * Start and end of each point kept, its timestamp, and where the value of a plain point starts
   * (PointList.plainValue; -1 for the others): the answer's items take views of these, the item
   * being read from `used` on, so that an answer allocates a few arrays, not three per series.
   */
  private bounds: Int32Array;
  private times: Float64Array;
  private plain: Int32Array;
  private used = 0;

  constructor(
    body: Buffer,
    /** Some item holds a line break (ScannedPage.lineBreaks): each point is looked at for one. */
    private readonly lineBreaks: boolean,
    private readonly match: AnswerMatch,
  ) {
    super();
    // Room for the plain points a body of this size holds: most answers allocate their arrays once.
    const room = Math.max(1024, Math.ceil(body.length / PLAIN_POINT_BYTES));
    this.bounds = new Int32Array(2 * room);
    this.times = new Float64Array(room);
    this.plain = new Int32Array(room);
    this.b = body;
    this.end = body.length;
    const { aggregates } = match;
    this.point = new PointFields(['timestamp', ...(aggregates ?? ['value', 'status'])]);
    this.aggregateNames = (aggregates ?? []).map((_, i) => i + 1);
    this.counts = (aggregates ?? []).map(isCountAggregate);
  }

  /** The item at `start`, read and checked; undefined when it is not the plain case or breaks a rule. */
  item(start: number): SeriesAnswer | undefined {
    const { b } = this;
    if (b[start] !== OPEN_OBJECT) return undefined;
    this.pos = start + 1;
    let id: number | undefined;
    let externalId: string | undefined;
    let isString: boolean | undefined;
    let nextCursor: string | undefined;
    let seen = 0;
    let query = -1;
    let points: PointList | undefined;
    for (let c = this.ws(); c !== CLOSE_OBJECT; c = this.next()) {
      const keyStart = this.pos + 1;
      if (this.string()) return undefined;
      const key = headKey(b, keyStart, this.pos - 1);
      this.ws();
      this.pos++;
      const v = this.ws();
      if (key < 0) {
        this.value();
        continue;
      }
      // Given twice, or after the points (which were read for what came before).
      if ((seen & (1 << key)) !== 0 || points !== undefined) return undefined;
      seen |= 1 << key;
      if (key === ID) {
        id = this.integer();
        if (id === undefined) return undefined;
      } else if (key === EXTERNAL_ID || key === NEXT_CURSOR) {
        if (v !== QUOTE) return undefined;
        const text = this.text();
        if (key === EXTERNAL_ID) externalId = text;
        else if (text === '') return undefined;
        else nextCursor = text;
      } else if (key === IS_STRING) {
        if (v !== LOWER_T && v !== LOWER_F) return undefined;
        isString = v === LOWER_T;
        this.pos += isString ? 4 : 5;
      } else if (key === DATAPOINTS) {
        if (v !== OPEN_ARRAY || id === undefined || isString === undefined) return undefined;
        query = this.match.find(id, externalId);
        if (query < 0) return undefined;
        points = this.points(this.match.queries[query]!, isString);
        if (points === undefined) return undefined;
      }
    }
    if (points === undefined) return undefined;
    return { query, id: id!, externalId, isString: isString!, nextCursor, points };
  }

  /** The string at `pos`, decoded. */
  private text(): string {
    const start = this.pos;
    const escaped = this.string();
    if (escaped) return JSON.parse(this.b.toString('utf8', start, this.pos)) as string;
    return this.b.toString('utf8', start + 1, this.pos - 1);
  }

  /**
   * The points of the array at `pos` for `query`, checked as readAnswer checks them; undefined for
   * anything it would not take as they are. The leading points of an aggregate chain at its `last`
   * are dropped, as readAnswer drops them, unchecked.
   */
  private points(query: AskedQuery, isString: boolean): PointList | undefined {
    const { b, point } = this;
    const raw = this.match.aggregates === undefined;
    let repeats = !raw && query.last !== null;
    let last = query.last ?? -Infinity;
    let count = 0;
    let kept = 0;
    this.pos++;
    for (let c = this.ws(); c !== CLOSE_ARRAY; c = this.next()) {
      if (count++ === query.limit) return undefined;
      const start = this.pos;
      if (!point.read(b, start)) return undefined;
      const end = point.pos;
      this.pos = end;
      if (this.lineBreaks && holdsLineBreak(b, start, end)) return undefined;
      const { plain } = point;
      // A number (never undefined), so that the loop keeps it unboxed.
      const timestamp = plain ? point.plainTimestamp : (point.integerOf(TIMESTAMP) ?? NaN);
      if (Number.isNaN(timestamp)) return undefined;
      if (repeats && timestamp === query.last) continue;
      repeats = false;
      if (timestamp <= last || (raw && timestamp < query.start) || timestamp >= query.end) return undefined;
      last = timestamp;
      // A plain point is `{"timestamp":..,"value":<number>}`: what a numeric series' point may be.
      if (plain ? isString : !(raw ? this.rawTaken(isString) : this.aggregatesTaken())) return undefined;
      this.keep(kept++, start, end, timestamp, plain ? point.starts[VALUE]! : -1);
    }
    this.pos++;
    const { used } = this;
    this.used += kept;
    return PointList.scanned(
      b,
      this.bounds.subarray(2 * used, 2 * (used + kept)),
      this.times.subarray(used, used + kept),
      this.plain.subarray(used, used + kept),
    );
  }

  /** The value and status of a raw point as readAnswer takes them. */
  private rawTaken(isString: boolean): boolean {
    const { point, status } = this;
    const value = point.first(VALUE);
    if (value !== 0) {
      // A string series' value is a string; a numeric one's a number or a string standing for one.
      const taken = isString ? value === QUOTE : isNumber(value) || point.numberOf(VALUE) !== undefined;
      if (!taken) return false;
    }
    const at = point.starts[STATUS]!;
    if (at === ABSENT) return true;
    if (!status.read(this.b, at) || status.integerOf(CODE) === undefined) return false;
    const symbol = status.first(SYMBOL);
    return symbol === 0 || symbol === QUOTE;
  }

  /** The aggregates of a point as readAnswer takes them: counts integers, the rest numbers. */
  private aggregatesTaken(): boolean {
    const { point } = this;
    for (let a = 0; a < this.aggregateNames.length; a++) {
      const name = this.aggregateNames[a]!;
      if (point.starts[name] === ABSENT) continue;
      if (this.counts[a] ? point.integerOf(name) === undefined : point.numberOf(name) === undefined) return false;
    }
    return true;
  }

  /** Keeps point `k` of the item being read. */
  private keep(k: number, start: number, end: number, timestamp: number, plain: number): void {
    let at = this.used + k;
    if (at === this.times.length) {
      // Items read before keep their views of the arrays they lie in; this one moves to new ones.
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
    this.plain[at] = plain;
  }
}

/** The index in HEAD of the key at [start, end) of `b` (without escapes); -1 for any other key. */
function headKey(b: Buffer, start: number, end: number): number {
  const length = end - start;
  for (let k = 0; k < HEAD.length; k++) {
    const name = HEAD[k]!;
    if (name.length === length && sameBytes(b, start, name, 0, length)) return k;
  }
  return -1;
}

function moved<T extends Int32Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

function isNumber(c: number): boolean {
  return c === MINUS || (c >= ZERO && c <= NINE);
}

/** A line break between the tokens of [start, end) (a string holds none as it is). */
function holdsLineBreak(b: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (b[i] === LF || b[i] === CR) return true;
  return false;
}
