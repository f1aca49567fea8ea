import { expect } from 'vitest';

type Row = Record<string, unknown>;

/**
 * The crash torture's row-by-row check (torture-points.ts, torture-instances.ts): every row's key
 * once, each equal to the expected row (every column, none more), and every expected key there.
 * Rows are compared by a canonical text (integers as bigint or number alike, NaN and ±Infinity as
 * such), so that a million points compare in a moment.
 */
export function expectRowsByKey(
  what: string,
  rows: readonly Row[],
  expected: ReadonlyMap<string, Row>,
  keyOf: (row: Row) => string,
): void {
  const seen = expectRowsWithin(what, rows, expected, keyOf);
  const lost = [...expected.keys()].filter((key) => !seen.has(key));
  expect(lost.slice(0, 10), `${what}: ${lost.length} of ${expected.size} rows lost`).toEqual([]);
  expect(rows.length, `${what}: rows`).toBe(expected.size);
}

/** A check of a stream's rows by key against the rows expected: expectRowsByKey or expectRowsWithin. */
export type RowsCheck = (
  what: string,
  rows: readonly Row[],
  expected: ReadonlyMap<string, Row>,
  keyOf: (row: Row) => string,
) => unknown;

/**
 * The rows of an export not complete yet: every row's key once and each equal to the expected row,
 * as expectRowsByKey checks them; rows still to come may be missing. Returns the keys seen.
 */
export function expectRowsWithin(
  what: string,
  rows: readonly Row[],
  expected: ReadonlyMap<string, Row>,
  keyOf: (row: Row) => string,
): Set<string> {
  const seen = new Set<string>();
  for (const row of rows) {
    const key = keyOf(row);
    if (seen.has(key)) expect.fail(`${what}: ${key} repeated`);
    seen.add(key);
    const want = expected.get(key);
    if (want === undefined) expect.fail(`${what}: ${key} is not in the source: ${canonical(row)}`);
    if (canonical(row) !== canonical(want)) {
      expect.fail(`${what}: ${key}\n  got      ${canonical(row)}\n  expected ${canonical(want)}`);
    }
  }
  return seen;
}

/** A row as text: its columns sorted by name, each value tagged by kind (number, text, null, other). */
function canonical(row: Row): string {
  return JSON.stringify(
    Object.keys(row)
      .sort()
      .map((name) => [name, tagged(row[name])]),
  );
}

function tagged(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'bigint') return `n:${String(value)}`;
  if (typeof value === 'string') return `s:${value}`;
  if (value === null) return 'null';
  return `${typeof value}:${JSON.stringify(value)}`;
}
