import type { RecordBatch, Schema } from 'apache-arrow';
import { BadItemError } from '../../errors.js';
import type { PageItems } from '../../page/index.js';
import { changeColumns, type ColumnSpec } from '../../resources/index.js';
import { columnsBatch, columnsSchema } from '../parquet/arrow-types.js';
import { newColumn } from '../parquet/column-builders.js';
import { type Column, ColumnTypeError } from '../parquet/columns.js';
import type { EncodedColumn } from '../parquet/encode.js';

/** A bad point's value as the NDJSON rows keep it (the platform's text), and the double it stands for. */
const NON_FINITE: Readonly<Record<string, number>> = { 'NaN': Number.NaN, 'Infinity': Infinity, '-Infinity': -Infinity };

/**
 * Collects a subscription's change rows (resources/subscription-changes.ts), given as values, into
 * reusable Arrow columns; `batch()` views them as a RecordBatch, valid until `reset()`.
 */
export class ChangeRowBuilder {
  readonly schema: Schema;
  private readonly specs: readonly ColumnSpec[];
  private readonly columns: Column[];
  rows = 0;

  constructor(includeStatus: boolean, capacity: number) {
    this.specs = changeColumns(includeStatus);
    this.schema = columnsSchema(this.specs);
    this.columns = this.specs.map((spec) => newColumn(spec.kind, capacity));
  }

  addItem(page: PageItems, i: number): void {
    const row = page.value(i) as Record<string, unknown>;
    for (let c = 0; c < this.specs.length; c++) {
      const { name, required } = this.specs[c]!;
      let value = row[name];
      if (name === 'value' && typeof value === 'string') value = NON_FINITE[value] ?? value;
      if (required && (value === undefined || value === null)) {
        throw new BadItemError(`A change row has no '${name}': ${JSON.stringify(row).slice(0, 120)}`);
      }
      try {
        this.columns[c]!.push(value);
      } catch (error) {
        if (!(error instanceof ColumnTypeError)) throw error;
        throw new BadItemError(`A change row's '${name}' ${error.message}: ${JSON.stringify(row).slice(0, 120)}`);
      }
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

/**
 * How change rows' columns are encoded: integers and times delta-encoded, as a collection's; the
 * series' externalId and the change's kind repeat, so dictionaries pay.
 */
export function changeEncodings(includeStatus: boolean): EncodedColumn[] {
  return changeColumns(includeStatus).map(({ name, kind }) => ({
    name,
    encoding: kind === 'int64' || kind === 'timestamp' ? 'delta' : undefined,
  }));
}
