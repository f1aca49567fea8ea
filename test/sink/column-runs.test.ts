import { type Data, Float64, Int64, makeVector, Utf8 } from 'apache-arrow';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Float64Column, Int64Column, Utf8Column } from '../../src/sink/parquet/columns.js';

/**
 * A run of rows added at once (pushRun, as a datapoints batch copies a block's range) makes the same
 * Arrow data as the same rows pushed one by one: values, nulls and bitmap, batch after batch.
 */
const encoder = new TextEncoder();

/** Cuts `rows` into runs at the given points. */
function runsOf<T>(rows: readonly T[], cuts: readonly number[]): T[][] {
  const at = [...new Set(cuts.map((cut) => cut % (rows.length + 1)))].sort((a, b) => a - b);
  return [...at, rows.length].map((end, k) => rows.slice(k === 0 ? 0 : at[k - 1], end));
}

function same(a: Data, b: Data): void {
  expect(a.length).toBe(b.length);
  expect(a.nullCount).toBe(b.nullCount);
  const bits = (data: Data) => (data.nullBitmap === undefined ? undefined : [...data.nullBitmap]);
  expect(bits(a)).toEqual(bits(b));
  expect(makeVector(a).toArray()).toEqual(makeVector(b).toArray());
}

describe('pushRun', () => {
  it('of text: the same as pushing each string or null', () => {
    const row = fc.option(fc.string({ unit: 'grapheme', maxLength: 12 }), { nil: null });
    const batches = fc.array(fc.array(row, { maxLength: 40 }), { minLength: 1, maxLength: 3 });
    fc.assert(
      fc.property(batches, fc.array(fc.nat(), { maxLength: 5 }), (batchRows, cuts) => {
        const byRun = new Utf8Column(2, 1);
        const byRow = new Utf8Column(2, 1);
        for (const rows of batchRows) {
          // The block's layout: each row's UTF-8 end to end after a prefix of others' bytes.
          const prefix = encoder.encode('prefix');
          const texts = rows.map((text) => encoder.encode(text ?? ''));
          const bytes = new Uint8Array(prefix.length + texts.reduce((sum, text) => sum + text.length, 0));
          bytes.set(prefix);
          const ends = new Int32Array(rows.length);
          let end = prefix.length;
          texts.forEach((text, i) => {
            bytes.set(text, end);
            end += text.length;
            ends[i] = end;
          });
          const present = Uint8Array.from(rows, (text) => (text === null ? 0 : 1));
          let from = 0;
          for (const run of runsOf(rows, cuts)) {
            byRun.pushRun(bytes, from === 0 ? prefix.length : ends[from - 1]!, ends, present, from, run.length);
            from += run.length;
          }
          for (const text of rows) byRow.push(text);
          same(byRun.toData(new Utf8()), byRow.toData(new Utf8()));
          byRun.reset();
          byRow.reset();
        }
      }),
    );
  });

  it('of doubles: the same as pushing each number or null', () => {
    const row = fc.option(fc.double(), { nil: null });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 80 }), fc.array(fc.nat(), { maxLength: 5 }), (rows, cuts) => {
        const values = Float64Array.from(rows, (value) => value ?? 0);
        const present = Uint8Array.from(rows, (value) => (value === null ? 0 : 1));
        const byRun = new Float64Column(2);
        const byRow = new Float64Column(2);
        let from = 0;
        for (const run of runsOf(rows, cuts)) {
          byRun.pushRun(values, present, from, run.length);
          from += run.length;
        }
        for (const value of rows) byRow.push(value);
        same(byRun.toData(new Float64()), byRow.toData(new Float64()));
      }),
    );
  });

  it('of int64: the same as pushing each integer or null; every row valid without `present`', () => {
    const row = fc.option(fc.maxSafeInteger(), { nil: null });
    const cuts = fc.array(fc.nat(), { maxLength: 5 });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 80 }), cuts, fc.boolean(), (rows, at, all) => {
        const values = Float64Array.from(rows, (value) => value ?? 0);
        const present = all ? undefined : Uint8Array.from(rows, (value) => (value === null ? 0 : 1));
        const byRun = new Int64Column(2);
        const byRow = new Int64Column(2);
        let from = 0;
        for (const run of runsOf(rows, at)) {
          byRun.pushRun(values, present, from, run.length);
          from += run.length;
        }
        for (const value of rows) byRow.push(all ? (value ?? 0) : value);
        same(byRun.toData(new Int64()), byRow.toData(new Int64()));
      }),
    );
  });

  it('of int64 refuses a number that is not a safe integer, before it writes any row', () => {
    const column = new Int64Column(2);
    const values = Float64Array.of(1, 2, 2 ** 53, 4);
    expect(() => column.pushRun(values, undefined, 0, 4)).toThrow(/expected an integer, got number 9007199254740992/);
    expect(column.length).toBe(0);
    column.pushRun(values, Uint8Array.of(1, 1, 0, 1), 0, 4);
    expect(column.length).toBe(4);
  });
});
