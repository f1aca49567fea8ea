import type { BoolColumn, Column, Float64Column, Int64Column, Utf8Column } from '../parquet/columns.js';
import { ItemFields, KEY_ESCAPED, VALUE_ESCAPED } from './item-fields.js';
import { CLOSE_ARRAY, decodeString, LOWER_N, LOWER_T, sameBytes } from '../parquet/json-bytes.js';
import type { Int64ListColumn, LabelListColumn, StringMapColumn } from '../parquet/nested-columns.js';
import type { ColumnSpec } from '../parquet/schemas.js';

/**
 * Reads one item straight from its bytes (as received, already checked to be valid JSON and UTF-8
 * by the page scan) into a row group's columns, without building its object: strings are copied
 * as the UTF-8 bytes they are (a string with an escape is decoded alone), integers are read digit
 * by digit. Fields outside the schema are parsed alone into `extra`, as RowGroupBuilder.addOne
 * writes it.
 *
 * It takes only the plain case and answers false, having changed nothing, for anything else: a
 * schema field given twice, a key written with escapes, a value of another type than its column's,
 * an integer that is not safe, a required field missing, a map key of digits only (an object
 * orders those first) or given twice, a kind it does not read (sequences' `columns`). The caller
 * then parses that item with JSON.parse as before, so the columns end up the same either way, and
 * a bad item fails with the same message.
 *
 * Two passes per item: ItemFields finds where each field's value lies and checks its shape; `fill`
 * pushes the values.
 */
export class ItemWalk {
  private readonly fields: ItemFields;
  /** Per column: the UTF-8 bytes of its metadata key, for `metadata_<key>` columns. */
  private readonly metadataKeys: (Buffer | undefined)[];
  /** Whether every column is of a kind the walk reads. */
  private readonly usable: boolean;

  /** `columns` are the columns of `specs`, in order; `extra` the column of fields outside them. */
  constructor(
    specs: readonly ColumnSpec[],
    private readonly columns: readonly Column[],
    private readonly extra: Utf8Column,
  ) {
    this.fields = new ItemFields(specs);
    this.metadataKeys = specs.map(({ metadataKey: key }) => (key === undefined ? undefined : Buffer.from(key)));
    this.usable = specs.every((spec) => spec.kind !== 'sequence-columns' && spec.kind !== 'extra-json');
  }

  /**
   * Adds the item at [start, end) of `body` (one JSON value) to the columns; false, nothing added,
   * if it is not the plain case.
   */
  add(body: Buffer, start: number, end: number): boolean {
    if (!this.usable || !this.fields.read(body, start, end)) return false;
    this.fillExtra();
    this.fill();
    return true;
  }

  /** Pushes the values the fields were found at into the columns, one per column. */
  private fill(): void {
    const { columns, fields } = this;
    const { b, kinds, starts, ends, numbers } = fields;
    for (let c = 0; c < columns.length; c++) {
      const start = starts[c]!;
      const column = columns[c]!;
      const metadataKey = this.metadataKeys[c];
      if (metadataKey !== undefined) {
        this.fillMetadataValue(column as Utf8Column, metadataKey);
        continue;
      }
      if (start < 0) {
        column.push(null);
        continue;
      }
      switch (kinds[c]) {
        case 'int64':
        case 'timestamp':
          (column as Int64Column).push(numbers[c]);
          break;
        case 'double':
          (column as Float64Column).push(Number(b.toString('latin1', start, ends[c])));
          break;
        case 'string':
          pushString(column as Utf8Column, b, start, ends[c]!, numbers[c] === 1);
          break;
        case 'boolean':
          (column as BoolColumn).push(b[start] === LOWER_T);
          break;
        case 'int64-list':
          this.fillList(column as Int64ListColumn, start);
          break;
        case 'label-list':
          this.fillLabels(column as LabelListColumn, start);
          break;
        case 'string-map':
          this.fillMap(column as StringMapColumn);
          break;
      }
    }
  }

  /**
   * The fields outside the schema into `extra`: each value parsed alone and set on an object in
   * the order of the item, so that repeated keys and keys of digits end up as JSON.parse would
   * place them.
   */
  private fillExtra(): void {
    const { b, unknowns, unknownCount } = this.fields;
    if (unknownCount === 0) {
      this.extra.push(null);
      return;
    }
    const extra: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (let u = 0; u < 4 * unknownCount; u += 4) {
      const key = b.toString('utf8', unknowns[u], unknowns[u + 1]);
      extra[key] = JSON.parse(b.toString('utf8', unknowns[u + 2], unknowns[u + 3]));
    }
    this.extra.push(JSON.stringify(extra));
  }

  /** The list at `start`, integers and nulls (as ItemFields checked), read again into the column. */
  private fillList(column: Int64ListColumn, start: number): void {
    const { fields } = this;
    column.openRow();
    fields.pos = start + 1;
    for (let c = fields.ws(); c !== CLOSE_ARRAY; c = fields.next()) {
      if (c === LOWER_N) {
        fields.pos += 4;
        column.element(null);
      } else {
        column.element(fields.integer()!);
      }
    }
    column.closeRow();
  }

  /** The labels at `start`, each `{"externalId": "..."}` (as ItemFields checked): their externalIds into the column. */
  private fillLabels(column: LabelListColumn, start: number): void {
    const { fields } = this;
    column.openRow();
    fields.pos = start + 1;
    for (let c = fields.ws(); c !== CLOSE_ARRAY; c = fields.next()) {
      fields.pos++;
      fields.ws();
      fields.string();
      fields.ws();
      fields.pos++;
      fields.ws();
      const valueStart = fields.pos;
      const escaped = fields.string();
      column.element(fields.b, valueStart, fields.pos, escaped);
      fields.ws();
      fields.pos++;
    }
    column.closeRow();
  }

  private fillMap(column: StringMapColumn): void {
    const { b, entries, entryCount } = this.fields;
    column.openRow();
    for (let e = 0; e < 5 * entryCount; e += 5) {
      const flags = entries[e + 4]!;
      const key = flags & KEY_ESCAPED ? decodeString(b, entries[e]!, entries[e + 1]!) : undefined;
      const escaped = (flags & VALUE_ESCAPED) !== 0;
      column.entry(b, entries[e]!, entries[e + 1]!, key, entries[e + 2]!, entries[e + 3]!, escaped);
    }
    column.closeRow();
  }

  /** A `metadata_<key>` column: the item's `metadata[key]`, a string, or null. */
  private fillMetadataValue(column: Utf8Column, key: Buffer): void {
    const { b, entries, entryCount } = this.fields;
    for (let e = 0; e < 5 * entryCount; e += 5) {
      const keyStart = entries[e]!;
      const keyEnd = entries[e + 1]!;
      const flags = entries[e + 4]!;
      const same = flags & KEY_ESCAPED
        ? decodeString(b, keyStart, keyEnd) === key.toString()
        : keyEnd - keyStart === key.length && sameBytes(b, keyStart, key, 0, key.length);
      if (same) {
        pushString(column, b, entries[e + 2]! - 1, entries[e + 3]! + 1, (flags & VALUE_ESCAPED) !== 0);
        return;
      }
    }
    column.push(null);
  }
}

/** The string token [start, end) of `b` (quotes included) into the column: its bytes, or decoded if `escaped`. */
function pushString(column: Utf8Column, b: Buffer, start: number, end: number, escaped: boolean): void {
  if (escaped) column.push(JSON.parse(b.toString('utf8', start, end)));
  else column.pushUtf8(b, start + 1, end - 1);
}
