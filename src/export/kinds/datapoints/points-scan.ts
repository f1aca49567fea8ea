import { isUtf8 } from 'node:buffer';
import type { RequestContext } from '../../../http/errors.js';
import { BAD, CLOSED, JsonGrammar } from '../../../page/index.js';
import { isCountAggregate } from '../../../resources/index.js';
import {
  ABSENT,
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  LOWER_F,
  LOWER_T,
  MINUS,
  NINE,
  OPEN_ARRAY,
  OPEN_OBJECT,
  PointFields,
  type PointList,
  QUOTE,
  sameBytes,
  ZERO,
} from '../../../sink/index.js';
import { PointSpans } from './point-spans.js';
import { type AggregatesAsked, AnswerMatch, type AskedQuery, type SeriesAnswer } from './points-answer.js';

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

/** Offsets of a body's points are held in Int32Arrays (a body that large is parsed, and refused, as before). */
const MAX_SCANNED_BYTES = 2 ** 31 - 1;

const ITEMS = Buffer.from('items');

/**
 * readAnswer for an answer read from its bytes in one pass, without building an object per point:
 * each series' points are byte ranges of `body` with their timestamps (PointList.scanned), so that
 * NDJSON lines are the points' own bytes and Parquet columns are read from them.
 *
 * The pass checks the bytes as JSON.parse would (UTF-8, JSON's grammar) and reads the answer in
 * the plain case only, where readAnswer would take every item and give the same series: top-level
 * and item keys without escapes, each given once; `id`, `externalId` and `isString` before
 * `datapoints`; integers written in digits; every point an object on one line whose checks pass.
 * For anything else it answers undefined, and the caller parses the body and reads it with
 * readAnswer, which takes it or fails with its message: the scan never names a problem itself.
 */
export function readScannedAnswer(
  body: Buffer,
  queries: readonly AskedQuery[],
  aggregates: AggregatesAsked | undefined,
  ctx: RequestContext,
): ScannedAnswer | undefined {
  // The scan reads no instanceId: an answer to queries by instanceId is parsed, and readAnswer matches them.
  if (queries.some((query) => 'instanceId' in query.ref)) return undefined;
  if (body.length > MAX_SCANNED_BYTES || !isUtf8(body)) return undefined;
  const match = new AnswerMatch(queries, aggregates, ctx);
  const scan = new AnswerScan(body, match);
  const series = scan.answer();
  if (series === undefined) {
    scan.spans.free();
    return undefined;
  }
  return { series, unknown: match.unknown(), spans: scan.spans };
}

/** An answer read by readScannedAnswer: its series, and the arrays that say where their points lie. */
export interface ScannedAnswer {
  series: SeriesAnswer[];
  unknown: number[];
  /** Freed (PointSpans.free) once the series' points are written. */
  spans: PointSpans;
}

/** Reads one answer in one pass (readScannedAnswer). */
class AnswerScan extends JsonGrammar {
  private readonly point: PointFields;
  private readonly status = new PointFields(['code', 'symbol']);
  /** Per aggregate asked: its name's index in `point`, and whether it is a count (an integer). */
  private readonly aggregateNames: number[];
  private readonly counts: boolean[];
  readonly spans: PointSpans;

  constructor(
    private readonly body: Buffer,
    private readonly match: AnswerMatch,
  ) {
    super(body);
    this.spans = new PointSpans(body, match.queries.reduce((sum, query) => sum + query.limit, 0));
    const aggregates = match.aggregates?.names;
    this.point = new PointFields(['timestamp', ...(aggregates ?? ['value', 'status'])]);
    this.aggregateNames = (aggregates ?? []).map((_, i) => i + 1);
    this.counts = (aggregates ?? []).map(isCountAggregate);
  }

  /** The answer's items, `{"items": [...]}` and other members skipped; undefined when not the plain case. */
  answer(): SeriesAnswer[] | undefined {
    const { b } = this;
    this.ws();
    if (b[this.pos] !== OPEN_OBJECT) return undefined;
    this.pos++;
    this.depth = 1;
    this.ws();
    if (b[this.pos] === CLOSE_OBJECT) return undefined;
    let items: SeriesAnswer[] | undefined;
    for (;;) {
      const key = this.plainKey();
      if (key === undefined) return undefined;
      if (key.length === ITEMS.length && sameBytes(key, 0, ITEMS, 0, ITEMS.length)) {
        if (items !== undefined || b[this.pos] !== OPEN_ARRAY) return undefined;
        items = this.items();
        if (items === undefined) return undefined;
      } else if (!this.value()) {
        return undefined;
      }
      const next = this.separator(CLOSE_OBJECT);
      if (next === BAD) return undefined;
      if (next === CLOSED) break;
    }
    this.ws();
    return this.pos === b.length ? items : undefined;
  }

  /** The `items` array at `pos`, each item read and matched to its query. */
  private items(): SeriesAnswer[] | undefined {
    const series: SeriesAnswer[] = [];
    this.pos++;
    this.ws();
    if (this.b[this.pos] === CLOSE_ARRAY) {
      this.pos++;
      return series;
    }
    // The items array, and each item, are levels of the answer this scan reads itself.
    this.depth += 2;
    for (;;) {
      const item = this.item();
      if (item === undefined) return undefined;
      // The query the scan found: nothing was taken since.
      this.match.take(`item ${series.length + 1}`, item.id, item.externalId);
      series.push(item);
      const next = this.separator(CLOSE_ARRAY);
      if (next === BAD) return undefined;
      if (next === CLOSED) break;
    }
    this.depth -= 2;
    return series;
  }

  /** The item at `pos`, read and checked; undefined when it is not the plain case or breaks a rule. */
  private item(): SeriesAnswer | undefined {
    const { b } = this;
    if (b[this.pos] !== OPEN_OBJECT) return undefined;
    this.pos++;
    this.ws();
    if (b[this.pos] === CLOSE_OBJECT) return undefined;
    let id: number | undefined;
    let externalId: string | undefined;
    let isString: boolean | undefined;
    let nextCursor: string | undefined;
    let seen = 0;
    let query = -1;
    let points: PointList | undefined;
    for (;;) {
      const token = this.plainKey();
      if (token === undefined) return undefined;
      const key = headKey(token);
      if (key < 0) {
        if (!this.value()) return undefined;
      } else {
        // Given twice; or what matches the points to their query, after them.
        if ((seen & (1 << key)) !== 0 || (points !== undefined && key !== NEXT_CURSOR)) return undefined;
        seen |= 1 << key;
        const v = b[this.pos];
        if (key === ID) {
          id = this.safeInteger();
          if (id === undefined) return undefined;
        } else if (key === EXTERNAL_ID || key === NEXT_CURSOR) {
          const text = this.text();
          if (text === undefined || (key === NEXT_CURSOR && text === '')) return undefined;
          if (key === EXTERNAL_ID) externalId = text;
          else nextCursor = text;
        } else if (key === IS_STRING) {
          if ((v !== LOWER_T && v !== LOWER_F) || !this.value()) return undefined;
          isString = v === LOWER_T;
        } else if (key === DATAPOINTS) {
          if (v !== OPEN_ARRAY || id === undefined || isString === undefined) return undefined;
          query = this.match.find(id, externalId);
          if (query < 0) return undefined;
          points = this.points(this.match.queries[query]!, isString);
          if (points === undefined) return undefined;
        }
      }
      const next = this.separator(CLOSE_OBJECT);
      if (next === BAD) return undefined;
      if (next === CLOSED) break;
    }
    if (points === undefined) return undefined;
    return { query, id: id!, externalId, isString: isString!, nextCursor, points };
  }

  /**
   * The points of the array at `pos` for `query`, checked as readAnswer checks them; undefined for
   * anything it would not take as they are. The leading points of an aggregate chain at its `last`
   * are dropped, as readAnswer drops them, unchecked.
   */
  private points(query: AskedQuery, isString: boolean): PointList | undefined {
    const { b, body, point } = this;
    const raw = this.match.aggregates === undefined;
    let repeats = !raw && query.last !== null;
    let last = query.last ?? -Infinity;
    const earliest = this.match.earliest(query);
    let count = 0;
    this.pos++;
    this.ws();
    let closed = b[this.pos] === CLOSE_ARRAY;
    if (closed) this.pos++;
    // The points array: a point read by value() is the level below it.
    this.depth++;
    while (!closed) {
      if (count++ === query.limit) return undefined;
      const start = this.pos;
      if (b[start] !== OPEN_OBJECT) return undefined;
      // Most points are plain, read and checked at once; the others are checked as JSON first.
      const plain = point.readPlain(body, start);
      if (plain) {
        this.pos = point.pos;
      } else {
        this.broke = false;
        // A point on more than one line is not one NDJSON line as it is: left to readAnswer.
        if (!this.value() || this.broke || !point.read(body, start)) return undefined;
      }
      const end = this.pos;
      // A number (never undefined), so that the loop keeps it unboxed.
      const timestamp = plain ? point.plainTimestamp : (point.integerOf(TIMESTAMP) ?? NaN);
      if (Number.isNaN(timestamp)) return undefined;
      const next = this.separator(CLOSE_ARRAY);
      if (next === BAD) return undefined;
      closed = next === CLOSED;
      if (repeats && timestamp === query.last) continue;
      repeats = false;
      if (timestamp <= last || timestamp < earliest || timestamp >= query.end) return undefined;
      last = timestamp;
      // A plain point is `{"timestamp":..,"value":<number>}`: what a numeric series' point may be.
      if (plain ? isString : !(raw ? this.rawTaken(isString) : this.aggregatesTaken())) return undefined;
      this.spans.keep(start, end, timestamp, plain ? point.starts[VALUE]! : -1);
    }
    this.depth--;
    return this.spans.take();
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
    if (!status.read(this.body, at) || status.integerOf(CODE) === undefined) return false;
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
}

/** The index in HEAD of `key` (its bytes, without escapes); -1 for any other key. */
function headKey(key: Uint8Array): number {
  for (let k = 0; k < HEAD.length; k++) {
    const name = HEAD[k]!;
    if (name.length === key.length && sameBytes(key, 0, name, 0, key.length)) return k;
  }
  return -1;
}

function isNumber(c: number): boolean {
  return c === MINUS || (c >= ZERO && c <= NINE);
}
