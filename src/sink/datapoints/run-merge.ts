import type { RunCursor } from './point-runs.js';
import { repeatedPoint } from './point-table.js';
import type { RowBlock } from './row-block.js';
import type { SeriesTable } from './series-table.js';

/**
 * Takes rows `from` to `to - 1` of `block`, the next ones in file order; a promise when it must be
 * awaited before the next rows (the block stays as it is until then).
 */
type EmitRows = (block: RowBlock, from: number, to: number) => Promise<void> | undefined;

/**
 * Merges sorted runs into file order, by series id (of `series`), then time, handing `emit` the
 * rows as ranges of a run's block: the rows of the run at the top up to the next row of any other
 * run, so that rows of one series in one run, the usual case, go in one range. Holds one block of
 * each run at a time, and awaits only when `emit` asks it or a block ends. Throws, before the
 * second is emitted, when two rows have one series and time: the export never reads a point
 * twice, so the shard must not be written.
 */
export async function mergeRuns(cursors: readonly RunCursor[], series: SeriesTable, emit: EmitRows): Promise<void> {
  const rank = series.ranks();
  const compare = (a: RowBlock, i: number, b: RowBlock, j: number) =>
    rank[a.series[i]!]! - rank[b.series[j]!]! || a.times[i]! - b.times[j]!;
  const heap = new CursorHeap((a, b) => compare(a.block!, a.pos, b.block!, b.pos));
  for (const cursor of cursors) if (await cursor.advance()) heap.push(cursor);
  for (let cursor = heap.pop(); cursor !== undefined; cursor = heap.pop()) {
    const block = cursor.block!;
    let to = cursor.pos;
    const next = heap.peek();
    if (next === undefined) {
      to = block.rows;
    } else {
      for (; to < block.rows; to++) {
        const order = compare(block, to, next.block!, next.pos);
        if (order === 0) throw repeatedPoint(series.id(block.series[to]!), block.times[to]!);
        if (order > 0) break;
      }
    }
    const taking = emit(block, cursor.pos, to);
    if (taking !== undefined) await taking;
    cursor.pos = to;
    if (to < block.rows || (await cursor.advance())) heap.push(cursor);
  }
}

/** A binary min-heap of cursors by their next row. */
class CursorHeap {
  private readonly items: RunCursor[] = [];

  constructor(private readonly compare: (a: RunCursor, b: RunCursor) => number) {}

  peek(): RunCursor | undefined {
    return this.items[0];
  }

  push(cursor: RunCursor): void {
    const { items } = this;
    let at = items.push(cursor) - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (this.compare(items[parent]!, cursor) <= 0) break;
      items[at] = items[parent]!;
      at = parent;
    }
    items[at] = cursor;
  }

  pop(): RunCursor | undefined {
    const { items } = this;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    let at = 0;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= items.length) break;
      if (child + 1 < items.length && this.compare(items[child + 1]!, items[child]!) < 0) child++;
      if (this.compare(last, items[child]!) <= 0) break;
      items[at] = items[child]!;
      at = child;
    }
    items[at] = last;
    return top;
  }
}
