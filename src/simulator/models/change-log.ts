/**
 * Every change made to instances since the simulator started, in order: the feed
 * `/models/instances/sync` reads after its backfill. Each change has a sequence number (1, 2, ...);
 * an instance changed several times counts at its latest change only, so a reader of the feed
 * sees each changed instance once, in the order of their latest changes.
 */
export class ChangeLog {
  private readonly seqs: number[] = [];
  private readonly keys: number[] = [];
  private readonly latest = new Map<number, number>();
  private last = 0;

  /** The sequence number of the newest change; 0 before any. */
  get lastSeq(): number {
    return this.last;
  }

  /** Records a change of the instance `key`; returns its sequence number. */
  record(key: number): number {
    const seq = ++this.last;
    this.seqs.push(seq);
    this.keys.push(key);
    this.latest.set(key, seq);
    return seq;
  }

  /** The sequence number of the instance's latest change, if it was ever changed. */
  latestOf(key: number): number | undefined {
    return this.latest.get(key);
  }

  /**
   * The changes after `seq`, oldest first, each instance at its latest change only: `[seq, key]`
   * pairs. Lazy, so that a reader stops where its page ends.
   */
  * after(seq: number): Generator<[number, number]> {
    for (let at = this.firstAfter(seq); at < this.seqs.length; at++) {
      const entrySeq = this.seqs[at] ?? 0;
      const key = this.keys[at] ?? 0;
      if (this.latest.get(key) === entrySeq) yield [entrySeq, key];
    }
  }

  /** The index of the first entry whose sequence number is above `seq` (binary search). */
  private firstAfter(seq: number): number {
    let low = 0;
    let high = this.seqs.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.seqs[middle] ?? 0) <= seq) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
