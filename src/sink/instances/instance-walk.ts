import type { InstanceColumn, ViewRef } from '../../resources/index.js';
import {
  type BoolColumn,
  type CheckedColumn,
  type Float64Column,
  type Int64Column,
  Utf8Column,
} from '../parquet/columns.js';
import { decodeString } from '../parquet/json-bytes.js';
import { type Float32Column, type Int32Column, ListColumn, StructColumn } from '../parquet/typed-columns.js';
import { InstanceFields } from './instance-fields.js';
import { AS_IS } from './json-text.js';
import { BOOLEAN, DATE, DOUBLE, FLOAT, INT32, INT64, JSON_VALUE, NODE_REF, STRING, TIMESTAMP } from './value-kinds.js';

/** Where the walk writes a column's values: the flat column of its scalars, inside a list or a struct or not. */
interface Target {
  readonly column: CheckedColumn;
  readonly kind: number;
  readonly list: ListColumn | undefined;
  /** The column its scalars go to (for a direct relation, its struct). */
  readonly flat: CheckedColumn;
  /** A direct relation's two texts. */
  readonly space: Utf8Column | undefined;
  readonly externalId: Utf8Column | undefined;
}

/**
 * Reads one instance straight from its bytes (as received: valid JSON and UTF-8, as the page
 * scan checked) into the columns of InstanceRowBuilder, without building its object: strings are
 * copied as the UTF-8 bytes they are (a string with an escape is decoded alone), numbers and DMS
 * times read where they lie, a json value copied when its bytes are already the text the column
 * keeps (else parsed alone and written again).
 *
 * It takes the plain case only, the row instanceRow gives with `extra` null: every key written
 * without escapes and none twice; no key but the fields that have a column and `properties`;
 * `properties` holding exactly the view's group `{space: {"view/version": {...}}}`, whose every
 * key is a property with a column; every value one its column holds (null included), a required
 * field present and not null. For anything else, an integer that is not safe anywhere included
 * (an instance with one may be parsed exactly, into a BigInt), it answers false having written
 * nothing, and the caller parses the instance as before: the columns are the same either way.
 *
 * Two passes per instance: InstanceFields finds and checks every value, `fill` writes them.
 */
export class InstanceWalk {
  private readonly fields: InstanceFields;
  private readonly targets: Target[];

  /** `columns` are the columns of `specs`, in order (newInstanceColumn's). */
  constructor(view: ViewRef, specs: readonly InstanceColumn[], columns: readonly CheckedColumn[]) {
    this.fields = new InstanceFields(view, specs);
    this.targets = specs.map((spec, c) => targetOf(columns[c]!, this.fields.kinds[c]!, spec.list));
  }

  /** Adds the instance at [start, end) of `body` to the columns; false, nothing added, if it is not the plain case. */
  add(body: Buffer, start: number, end: number): boolean {
    if (!this.fields.read(body, start, end)) return false;
    const { targets } = this;
    const { slots, counts } = this.fields;
    for (let c = 0; c < targets.length; c++) {
      const target = targets[c]!;
      let e = slots[c]!;
      if (e < 0) {
        target.column.push(null);
      } else if (target.list === undefined) {
        this.fill(target, e);
      } else {
        for (let k = counts[c]!; k > 0; k--) e = this.fill(target, e);
        target.list.closeRow();
      }
    }
    return true;
  }

  /** Writes one scalar, from entry `e` on, to the target's flat column; the entry after it. */
  private fill(target: Target, e: number): number {
    const { b, starts, ends, numbers } = this.fields;
    const value = numbers[e]!;
    switch (target.kind) {
      case STRING:
        pushText(target.flat as Utf8Column, b, starts[e]!, ends[e]!, value === 1);
        break;
      case JSON_VALUE:
        if (value === AS_IS) (target.flat as Utf8Column).pushUtf8(b, starts[e]!, ends[e]!);
        else (target.flat as Utf8Column).push(JSON.stringify(JSON.parse(b.toString('utf8', starts[e], ends[e]))));
        break;
      case INT32:
      case DATE:
        (target.flat as Int32Column).push(value);
        break;
      case INT64:
      case TIMESTAMP:
        (target.flat as Int64Column).push(value);
        break;
      case FLOAT:
        (target.flat as Float32Column).push(value);
        break;
      case DOUBLE:
        (target.flat as Float64Column).push(value);
        break;
      case BOOLEAN:
        (target.flat as BoolColumn).push(value === 1);
        break;
      case NODE_REF:
        pushText(target.space!, b, starts[e]!, ends[e]!, value === 1);
        pushText(target.externalId!, b, starts[e + 1]!, ends[e + 1]!, numbers[e + 1] === 1);
        (target.flat as StructColumn).closeRow();
        return e + 2;
    }
    return e + 1;
  }
}

/** The string inside quotes at [start, end) of `b` into the column: its bytes, or decoded if `escaped`. */
function pushText(column: Utf8Column, b: Buffer, start: number, end: number, escaped: boolean): void {
  if (escaped) column.push(decodeString(b, start, end));
  else column.pushUtf8(b, start, end);
}

/** Where the values of a column (newInstanceColumn's) go. */
function targetOf(column: CheckedColumn, kind: number, list: boolean): Target {
  const listColumn = list ? expect(column, ListColumn) : undefined;
  const scalar = listColumn?.elements ?? column;
  if (kind === NODE_REF) {
    const struct = expect(scalar, StructColumn);
    const [space, externalId] = struct.fields.map((field) => expect(field.column, Utf8Column));
    return { column, kind, list: listColumn, flat: struct, space, externalId };
  }
  return { column, kind, list: listColumn, flat: scalar, space: undefined, externalId: undefined };
}

function expect<T>(column: unknown, type: new (...args: never[]) => T): T {
  if (!(column instanceof type)) throw new Error(`InstanceWalk: a column is not the ${type.name} its kind has`);
  return column;
}
