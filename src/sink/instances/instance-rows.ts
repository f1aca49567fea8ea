import type { RecordBatch, Schema } from 'apache-arrow';
import { isInteger, isSafeNumber, parse as parseExact, stringify as stringifyExact } from 'lossless-json';
import { BadItemError } from '../../errors.js';
import { PageItems } from '../../page/index.js';
import { type InstanceColumn, instanceRow, type ViewRef } from '../../resources/index.js';
import { type CheckedColumn, describe } from '../parquet/columns.js';
import { columnsBatch, columnsSchema } from '../parquet/arrow-types.js';
import { newInstanceColumn } from '../parquet/column-builders.js';
import { InstanceWalk } from './instance-walk.js';

/**
 * Collects instances of one view into reusable Arrow columns; `batch()` views them as a RecordBatch,
 * valid until `reset()`. Each instance becomes a row as instanceRow has it: every value in its
 * column, and what no column takes (fields and properties without a column, properties of other
 * views, values a column cannot hold) in `extra`, in the instance's own shape.
 */
export class InstanceRowBuilder {
  readonly schema: Schema;
  private readonly columns: CheckedColumn[];
  private readonly walk: InstanceWalk | undefined;
  rows = 0;
  /** Rows read from their bytes by the walk since the builder was made (the others were parsed). */
  walked = 0;

  /** `options.walk`: read the plain instances of scanned pages from their bytes (InstanceWalk); default true. */
  constructor(
    private readonly view: ViewRef,
    private readonly specs: readonly InstanceColumn[],
    capacity: number,
    options: { readonly walk?: boolean } = {},
  ) {
    this.schema = columnsSchema(specs);
    this.columns = specs.map((spec) => newInstanceColumn(spec, capacity));
    this.walk = options.walk === false ? undefined : new InstanceWalk(view, specs, this.columns);
  }

  /** Adds the instances of a page. */
  add(items: PageItems | readonly unknown[]): void {
    const page = PageItems.from(items);
    for (let i = 0; i < page.length; i++) this.addItem(page, i);
  }

  /**
   * Adds instance `i` of a page. The plain instance of a scanned page is read from its bytes
   * (InstanceWalk); any other is parsed. An instance whose bytes hold a number of 16 digits or more
   * (which may be an integer beyond 2^53, that JSON.parse would round) is parsed exactly, such
   * integers as BigInt, so that its int64 columns and its `extra` keep them as they were sent; the
   * walk leaves every integer that is not safe to that parse, so it agrees with both.
   */
  addItem(page: PageItems, i: number): void {
    const bytes = page.itemBytes(i);
    if (bytes !== undefined && this.walk?.add(bytes.body, bytes.start, bytes.end) === true) {
      this.rows++;
      this.walked++;
      return;
    }
    if (bytes !== undefined && page.longNumbers && hasLongNumber(bytes.body, bytes.start, bytes.end)) {
      this.addOne(parseExact(bytes.body.toString('utf8', bytes.start, bytes.end), null, exactNumber));
    } else {
      this.addOne(page.value(i));
    }
  }

  /** Adds one instance; one that is not an object, or lacks a field every instance has, is a BadItemError. */
  addOne(item: unknown): void {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      throw new BadItemError(`An instance is ${describe(item)}, not an object.`);
    }
    const values = instanceRow(item as Record<string, unknown>, this.specs, this.view);
    for (let c = 0; c < this.specs.length; c++) {
      const spec = this.specs[c]!;
      const value = values[c];
      if (spec.required && (value === null || value === undefined)) {
        const text = stringifyExact(item) ?? '';
        throw new BadItemError(`An instance has no valid '${spec.name}': ${text.slice(0, 160)}`);
      }
      // instanceRow checked the value's kind; a column refusing it still would be a bug, not data.
      this.columns[c]!.push(value);
    }
    this.rows++;
  }

  batch(): RecordBatch {
    return columnsBatch(this.schema, this.columns, this.rows);
  }

  reset(): void {
    for (const column of this.columns) column.reset();
    this.rows = 0;
  }
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
