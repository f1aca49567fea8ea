import { type DataType, Field, makeData, RecordBatch, Schema, Struct } from 'apache-arrow';
import { isInteger, isSafeNumber, parse as parseExact, stringify as stringifyExact } from 'lossless-json';
import { BadItemError } from '../../errors.js';
import { PageItems } from '../../page/index.js';
import { describe, Utf8Column } from '../parquet/columns.js';
import type { CheckedColumn } from '../parquet/typed-columns.js';
import { arrowTypeOf, columnValue, type InstanceColumnSpec, newInstanceColumn, NOT_TAKEN } from './instance-values.js';

/** The view whose properties a stream's columns hold. */
export interface ViewRef {
  readonly space: string;
  readonly externalId: string;
  readonly version: string;
}

/** The name of the column that keeps what the others do not. */
export const EXTRA = 'extra';

/**
 * The Arrow schema of an instance stream's files: its columns in order, then `extra`; only the
 * required columns (the instance's own `space`, `externalId`, ...) are non-nullable.
 */
export function instanceSchema(specs: readonly InstanceColumnSpec[]): Schema {
  const fields = specs.map((spec) => new Field(spec.name, arrowTypeOf(spec), spec.required !== true));
  return new Schema([...fields, new Field(EXTRA, arrowTypeOf({ kind: 'string', list: false }), true)]);
}

/**
 * Collects instances of one view into reusable Arrow columns; `batch()` views them as a RecordBatch,
 * valid until `reset()`. Each column takes its instance field or its property of the view; what
 * no column takes is kept in `extra`, as a JSON object in the instance's own shape, so that nothing
 * is dropped: fields without a column, properties of other views, properties the view does not
 * list (added to it after the run began), and values that are not of their column's type (an
 * int64 beyond 2^53 parsed inexactly, a timestamp in another form) — that column is then null.
 */
export class InstanceRowBuilder {
  readonly schema: Schema;
  private readonly columns: CheckedColumn[];
  private readonly extra: Utf8Column;
  private readonly fields: ReadonlySet<string>;
  private readonly properties: ReadonlySet<string>;
  private readonly viewKey: string;
  rows = 0;

  constructor(
    private readonly view: ViewRef,
    private readonly specs: readonly InstanceColumnSpec[],
    capacity: number,
  ) {
    this.schema = instanceSchema(specs);
    this.columns = specs.map((spec) => newInstanceColumn(spec, capacity));
    this.extra = new Utf8Column(capacity);
    this.fields = new Set(specs.flatMap(({ from }) => ('field' in from ? [from.field] : [])));
    this.properties = new Set(specs.flatMap(({ from }) => ('property' in from ? [from.property] : [])));
    this.viewKey = `${view.externalId}/${view.version}`;
  }

  /** Adds the instances of a page. */
  add(items: PageItems | readonly unknown[]): void {
    const page = PageItems.from(items);
    for (let i = 0; i < page.length; i++) this.addItem(page, i);
  }

  /**
   * Adds instance `i` of a page. An instance whose bytes hold a number of 16 digits or more (which
   * may be an integer beyond 2^53, that JSON.parse would round) is parsed exactly instead, such
   * integers as BigInt, and its `extra` written with them as they were.
   */
  addItem(page: PageItems, i: number): void {
    const bytes = page.itemBytes(i);
    if (bytes !== undefined && hasLongNumber(bytes.body, bytes.start, bytes.end)) {
      this.addOne(parseExact(bytes.body.toString('utf8', bytes.start, bytes.end), null, exactNumber), true);
    } else {
      this.addOne(page.value(i));
    }
  }

  /**
   * Adds one instance; one without an object shape or a required field is a BadItemError. `exact`:
   * parsed with its large integers as BigInt.
   */
  addOne(item: unknown, exact = false): void {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      throw new BadItemError(`An instance is ${describe(item)}, not an object.`);
    }
    const instance = item as Record<string, unknown>;
    const own = this.ownProperties(instance);
    const left: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (let c = 0; c < this.specs.length; c++) {
      const spec = this.specs[c]!;
      const raw = 'field' in spec.from ? instance[spec.from.field] : own?.[spec.from.property];
      const value = raw === undefined || raw === null ? raw : this.valueOf(spec, raw);
      if (spec.required === true && (value === undefined || value === null || value === NOT_TAKEN)) {
        throw new BadItemError(`An instance has no valid '${spec.name}': ${stringifyExact(item)?.slice(0, 160)}`);
      }
      if (value === NOT_TAKEN || !this.columns[c]!.accepts(value)) {
        this.columns[c]!.push(null);
        if ('field' in spec.from) left[spec.from.field] = raw;
        else ((left.properties ??= {}) as Record<string, unknown>)[spec.from.property] = raw;
      } else {
        this.columns[c]!.push(value);
      }
    }
    this.extra.push(this.extraOf(instance, own, left, exact));
    this.rows++;
  }

  batch(): RecordBatch {
    const fields = this.schema.fields;
    const children = [...this.columns, this.extra].map((column, i) => column.toData(fields[i]!.type as DataType));
    const data = makeData({ type: new Struct(fields), length: this.rows, nullCount: 0, children });
    return new RecordBatch(this.schema, data);
  }

  reset(): void {
    for (const column of this.columns) column.reset();
    this.extra.reset();
    this.rows = 0;
  }

  /** A value as its column holds it, each element of a list converted alone; NOT_TAKEN if any is not. */
  private valueOf(spec: InstanceColumnSpec, raw: unknown): unknown {
    if (!spec.list) return columnValue(spec.kind, raw);
    if (!Array.isArray(raw)) return NOT_TAKEN;
    const values = raw.map((element: unknown) => (element === null ? null : columnValue(spec.kind, element)));
    return values.includes(NOT_TAKEN) ? NOT_TAKEN : values;
  }

  /** The instance's properties of the stream's view: `properties[space]["externalId/version"]`. */
  private ownProperties(instance: Record<string, unknown>): Record<string, unknown> | undefined {
    const bySpace = instance.properties as Record<string, unknown> | undefined;
    const byView = bySpace?.[this.view.space] as Record<string, unknown> | undefined;
    const own = byView?.[this.viewKey];
    return isObject(own) ? own : undefined;
  }

  /**
   * What no column took, in the instance's shape: fields without a column or whose value a column
   * refused, and under `properties` every property of other views and every property of this
   * view without a column or refused by one. Null when there is nothing.
   */
  private extraOf(
    instance: Record<string, unknown>,
    own: Record<string, unknown> | undefined,
    left: Record<string, unknown>,
    exact: boolean,
  ): string | null {
    const extra: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const key in instance) {
      if (key === 'properties') continue;
      if (!this.fields.has(key)) extra[key] = instance[key];
      else if (key in left) extra[key] = left[key];
    }
    const refused = left.properties as Record<string, unknown> | undefined;
    const properties = this.otherProperties(instance.properties, own, refused);
    if (properties !== undefined) extra.properties = properties;
    if (Object.keys(extra).length === 0) return null;
    return exact ? (stringifyExact(extra) as string) : JSON.stringify(extra);
  }

  private otherProperties(
    all: unknown,
    own: Record<string, unknown> | undefined,
    refused: Record<string, unknown> | undefined,
  ): Record<string, unknown> | undefined {
    if (all === undefined) return undefined;
    // `properties` not in the platform's shape: kept whole.
    if (!isObject(all)) return all as Record<string, unknown>;
    let kept: Record<string, unknown> | undefined;
    const keep = (space: string, view: string, value: unknown) => {
      kept ??= Object.create(null) as Record<string, unknown>;
      ((kept[space] ??= Object.create(null)) as Record<string, unknown>)[view] = value;
    };
    for (const [space, views] of Object.entries(all)) {
      if (!isObject(views)) {
        (kept ??= Object.create(null) as Record<string, unknown>)[space] = views;
        continue;
      }
      for (const [view, values] of Object.entries(views)) {
        if (space !== this.view.space || view !== this.viewKey || own === undefined) {
          keep(space, view, values);
          continue;
        }
        const rest: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
        for (const [name, value] of Object.entries(own)) {
          if (!this.properties.has(name) || (refused !== undefined && name in refused)) rest[name] = value;
        }
        if (Object.keys(rest).length > 0) keep(space, view, rest);
      }
    }
    return kept;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A number as JSON.parse reads it, but an integer beyond 2^53 as the BigInt it is. */
function exactNumber(text: string): number | bigint {
  return isInteger(text) && !isSafeNumber(text) ? BigInt(text) : Number(text);
}

const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
/** The most digits of an integer that is always safe: 2^53 has 16. */
const SAFE_DIGITS = 15;

/** Whether [start, end) of `body` holds a run of more than SAFE_DIGITS digits. */
function hasLongNumber(body: Buffer, start: number, end: number): boolean {
  let run = 0;
  for (let i = start; i < end; i++) {
    const c = body[i]!;
    run = c >= DIGIT_0 && c <= DIGIT_9 ? run + 1 : 0;
    if (run > SAFE_DIGITS) return true;
  }
  return false;
}
