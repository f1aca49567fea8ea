import { grow } from '../parquet/columns.js';

const encoder = new TextEncoder();

/**
 * The series of one datapoints shard, each numbered (its index) when first seen: a row refers to
 * its series by that index, which stays valid across the shard's sorted runs. Each externalId is
 * kept as UTF-8, encoded once, in one buffer: no object per series. A data-model series' node key
 * (space, externalId) is kept too, as UTF-8 encoded once: two buffers per such series.
 */
export class SeriesTable {
  private readonly indexOf = new Map<number, number>();
  private ids = new Float64Array(64);
  /** Per series: 1 when it has an externalId. */
  private named = new Uint8Array(64);
  /** Per series: where its externalId ends in `text`; it starts where the one before ends. */
  private ends = new Int32Array(64);
  private text = new Uint8Array(1024);
  /** Per series: its node's space and externalId as UTF-8, when it is a data-model series. */
  private readonly nodes: ({ space: Buffer; externalId: Buffer } | undefined)[] = [];
  count = 0;

  /** The index of series `id`, added (with its externalId and node key) when new. */
  add(id: number, externalId: string | undefined, instanceId?: { space: string; externalId: string }): number {
    const known = this.indexOf.get(id);
    if (known !== undefined) return known;
    const index = this.count++;
    this.nodes[index] = instanceId === undefined
      ? undefined
      : { space: Buffer.from(instanceId.space), externalId: Buffer.from(instanceId.externalId) };
    if (index >= this.ids.length) {
      const size = this.ids.length * 2;
      const ids = new Float64Array(size);
      ids.set(this.ids);
      this.ids = ids;
      this.named = grow(this.named, size);
      this.ends = grow(this.ends, size);
    }
    this.indexOf.set(id, index);
    this.ids[index] = id;
    let end = this.start(index);
    if (externalId !== undefined) {
      this.named[index] = 1;
      if (end + externalId.length * 3 > this.text.length) {
        this.text = grow(this.text, Math.max(this.text.length * 2, end + externalId.length * 3));
      }
      end += encoder.encodeInto(externalId, this.text.subarray(end)).written;
    }
    this.ends[index] = end;
    return index;
  }

  id(index: number): number {
    return this.ids[index]!;
  }

  /** The UTF-8 bytes of all externalIds: series `index`'s lie at [start(index), end(index)) when it has one. */
  get bytes(): Uint8Array {
    return this.text;
  }

  hasExternalId(index: number): boolean {
    return this.named[index] === 1;
  }

  start(index: number): number {
    return index === 0 ? 0 : this.ends[index - 1]!;
  }

  end(index: number): number {
    return this.ends[index]!;
  }

  externalId(index: number): string | undefined {
    if (!this.hasExternalId(index)) return undefined;
    return Buffer.from(this.text.subarray(this.start(index), this.end(index))).toString();
  }

  /** Series `index`'s node key part as UTF-8; undefined when it is no data-model series. */
  node(index: number, part: 'space' | 'externalId'): Buffer | undefined {
    return this.nodes[index]?.[part];
  }

  /** Per series index, its rank by id: the order of series in a shard's file. */
  ranks(): Int32Array {
    const byId = Array.from({ length: this.count }, (_, i) => i).sort((a, b) => this.ids[a]! - this.ids[b]!);
    const rank = new Int32Array(this.count);
    byId.forEach((index, r) => (rank[index] = r));
    return rank;
  }
}
