import { type DataType, makeData, RecordBatch, type Schema, Struct } from 'apache-arrow';
import type { Resource } from '../../config/job-schema.js';
import { BadItemError } from '../../errors.js';
import { resourceSpec, streamColumns } from '../../resources/index.js';
import { PageItems } from '../../page/index.js';
import { columnsSchema } from '../parquet/arrow-types.js';
import { newColumn } from '../parquet/column-builders.js';
import { type Column, ColumnTypeError, describe, Utf8Column } from '../parquet/columns.js';
import { ItemWalk } from './item-walk.js';
import { type ColumnSpec, EXTRA_COLUMN, columnsOf } from '../parquet/schemas.js';

/**
 * The Arrow schema of a stream's Parquet files: its collection's columns and its metadata columns;
 * only the key (`id`, or `externalId`) is non-nullable.
 */
export function arrowSchema(resource: Resource, metadataColumns: readonly string[] = []): Schema {
  const columns = streamColumns(columnsOf(resource), metadataColumns);
  return columnsSchema(columns);
}

/** `metadata[key]` when it is a string; the `metadata` column itself refuses a map of another shape. */
function metadataValue(metadata: unknown, key: string): string | null {
  if (typeof metadata !== 'object' || metadata === null) return null;
  const value = (metadata as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : null;
}

/**
 * Collects items of one resource into reusable Arrow columns; `batch()` views them as a
 * RecordBatch, valid until `reset()`.
 */
export class RowGroupBuilder {
  readonly schema: Schema;
  private readonly specs: readonly ColumnSpec[];
  private readonly columns: Column[];
  private readonly known: ReadonlySet<string>;
  private readonly extra: Utf8Column;
  private readonly key: string;
  private readonly walk: ItemWalk;
  rows = 0;

  constructor(
    private readonly resource: Resource,
    capacity: number,
    metadataColumns: readonly string[] = [],
  ) {
    this.schema = arrowSchema(resource, metadataColumns);
    this.specs = streamColumns(columnsOf(resource), metadataColumns).filter((spec) => spec.name !== EXTRA_COLUMN);
    this.columns = this.specs.map((spec) => newColumn(spec.kind, capacity));
    this.extra = new Utf8Column(capacity);
    // Metadata columns are not fields of the item: a field of that name still goes to `extra`.
    this.known = new Set(this.specs.filter((spec) => spec.metadataKey === undefined).map((spec) => spec.name));
    this.key = resourceSpec(resource).key;
    this.walk = new ItemWalk(this.specs, this.columns, this.extra);
  }

  /** Adds items; a field of the wrong type is a BadItemError naming the item and the field. */
  add(items: PageItems | readonly unknown[]): void {
    const page = PageItems.from(items);
    for (let i = 0; i < page.length; i++) this.addItem(page, i);
  }

  /**
   * Adds item `i` of a page: read straight from its bytes when it is the plain case (ItemWalk),
   * else parsed and added as a value (addOne), with the same columns either way.
   */
  addItem(page: PageItems, i: number): void {
    const bytes = page.itemBytes(i);
    if (bytes !== undefined && this.walk.add(bytes.body, bytes.start, bytes.end)) {
      this.rows++;
      return;
    }
    this.addOne(page.value(i));
  }

  /** Adds one item (add). */
  addOne(item: unknown): void {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      throw new BadItemError(`A ${this.resource} item is ${describe(item)}, not an object.`);
    }
    const fields = item as Record<string, unknown>;
    for (let c = 0; c < this.specs.length; c++) {
      const spec = this.specs[c]!;
      const { metadataKey } = spec;
      const value = metadataKey === undefined ? fields[spec.name] : metadataValue(fields.metadata, metadataKey);
      if (spec.required && (value === undefined || value === null)) {
        throw new BadItemError(`A ${this.resource} item has no '${spec.name}': ${JSON.stringify(item).slice(0, 120)}`);
      }
      try {
        this.columns[c]!.push(value);
      } catch (error) {
        if (!(error instanceof ColumnTypeError)) throw error;
        throw new BadItemError(
          `${this.resource} item ${this.key}=${String(fields[this.key])}: field '${spec.name}' ${error.message} (the platform documents it as ${spec.kind}).`,
        );
      }
    }
    // Without a prototype, so that a field named `__proto__` is kept as a field like any other.
    let extra: Record<string, unknown> | undefined;
    for (const key in fields) {
      if (!this.known.has(key)) (extra ??= Object.create(null) as Record<string, unknown>)[key] = fields[key];
    }
    this.extra.push(extra === undefined ? null : JSON.stringify(extra));
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
}
