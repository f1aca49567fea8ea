/**
 * The columns of a datapoints shard's Arrow batches: each a column of columns.ts (its buffers and
 * null bitmap reused batch after batch), filled from RowBlocks' typed arrays, a range of rows at a
 * time where the column allows.
 */
import type { ColumnSpec } from '../../resources/index.js';
import { type Column, ColumnTypeError, Float64Column, Int64Column, Utf8Column } from '../parquet/columns.js';
import { type NumberPart, RowBlock, type TextPart } from './row-block.js';
import type { SeriesTable } from './series-table.js';

/** Room for text a row at first: a datapoints shard's texts (externalIds, symbols) are short. */
const TEXT_BYTES_PER_ROW = 8;

/**
 * One column of a batch: its column, and how rows `from` to `from + n - 1` of a block are added to
 * it (at most the batch's capacity at a time).
 */
export interface BatchColumn {
  readonly column: Column;
  copy(block: RowBlock, from: number, n: number): void;
}

/** The series' ids (of `series`). */
export function seriesIds(series: SeriesTable, capacity: number): BatchColumn {
  const column = new Int64Column(capacity);
  const ids = new Float64Array(capacity);
  return {
    column,
    copy: (block, from, n) => {
      for (let i = 0; i < n; i++) ids[i] = series.id(block.series[from + i]!);
      column.pushRun(ids, undefined, 0, n);
    },
  };
}

/** The series' externalIds (of `series`): each copied from its UTF-8, encoded once per series. */
export function externalIds(series: SeriesTable, capacity: number): BatchColumn {
  const column = new Utf8Column(capacity, TEXT_BYTES_PER_ROW);
  return {
    column,
    copy: (block, from, n) => {
      for (let i = 0; i < n; i++) {
        const index = block.series[from + i]!;
        if (series.hasExternalId(index)) column.pushUtf8(series.bytes, series.start(index), series.end(index));
        else column.push(null);
      }
    },
  };
}

/** A part of the series' node keys (of `series`): `space` or `externalId`, null for a series that is no node. */
export function nodeKeys(series: SeriesTable, part: 'space' | 'externalId', capacity: number): BatchColumn {
  const column = new Utf8Column(capacity, TEXT_BYTES_PER_ROW);
  return {
    column,
    copy: (block, from, n) => {
      for (let i = 0; i < n; i++) {
        const text = series.node(block.series[from + i]!, part);
        if (text === undefined) column.push(null);
        else column.pushUtf8(text, 0, text.length);
      }
    },
  };
}

/** The rows' times, as epoch milliseconds. */
export function timestamps(capacity: number): BatchColumn {
  const column = new Int64Column(capacity);
  return { column, copy: (block, from, n) => column.pushRun(block.times, undefined, from, n) };
}

/**
 * The same text in every row (an aggregates stream's granularity), or null in every row: each
 * range copied from `capacity` copies of it laid end to end, made once.
 */
export function constantText(text: string | undefined, capacity: number): BatchColumn {
  const value = Buffer.from(text ?? '');
  const copies = new Uint8Array(value.length * capacity);
  const ends = new Int32Array(capacity);
  for (let row = 0; row < capacity; row++) {
    copies.set(value, row * value.length);
    ends[row] = (row + 1) * value.length;
  }
  const present = new Uint8Array(capacity).fill(text === undefined ? 0 : 1);
  const column = new Utf8Column(capacity, value.length);
  return { column, copy: (_block, _from, n) => column.pushRun(copies, 0, ends, present, 0, n) };
}

/** Value column `spec`, the block's part `c`. */
export function valueColumn(spec: ColumnSpec, c: number, capacity: number): BatchColumn {
  if (spec.kind === 'double') {
    const column = new Float64Column(capacity);
    return {
      column,
      copy: (block, from, n) => {
        const part = block.parts[c] as NumberPart;
        column.pushRun(part.values, part.present, from, n);
      },
    };
  }
  if (spec.kind === 'int64') {
    const column = new Int64Column(capacity);
    return {
      column,
      copy: (block, from, n) => {
        const part = block.parts[c] as NumberPart;
        try {
          column.pushRun(part.values, part.present, from, n);
        } catch (error) {
          // The answer's check lets only safe integers through; anything else would be written wrong.
          if (error instanceof ColumnTypeError) throw new ColumnTypeError(`${spec.name}: ${error.message}`);
          throw error;
        }
      },
    };
  }
  const column = new Utf8Column(capacity, TEXT_BYTES_PER_ROW);
  return {
    column,
    copy: (block, from, n) => {
      const part = block.parts[c] as TextPart;
      column.pushRun(part.bytes, RowBlock.textStart(part, from), part.ends, part.present, from, n);
    },
  };
}
