/**
 * What changed in a collection after it was generated: items updated (index -> the `lastUpdatedTime`
 * of the newest version, and how many versions came since) and items inserted (at the end, each with
 * the time it was created). Only changes are stored, so an untouched dataset still costs nothing.
 */
export class Revisions {
  private readonly updated = new Map<number, { at: number; revision: number }>();
  /** `createdTime` of each inserted item, in order: index `generated + k` is the k-th inserted. */
  private readonly insertedAt: number[] = [];

  constructor(
    private readonly resource: string,
    /** Items generated from the seed; inserted ones follow them. */
    readonly generated: number,
  ) {}

  /** Items in the collection now: the generated ones and those inserted since. */
  get count(): number {
    return this.generated + this.insertedAt.length;
  }

  /** The item's `createdTime`: the generated one, or when it was inserted. */
  createdTime(index: number, generated: number): number {
    return index < this.generated ? generated : (this.insertedAt[index - this.generated] ?? generated);
  }

  /** The item's `lastUpdatedTime`: the generated one (its insertion time if inserted) unless it was updated since. */
  lastUpdatedTime(index: number, generated: number): number {
    const updated = this.updated.size === 0 ? undefined : this.updated.get(index);
    return updated?.at ?? this.createdTime(index, generated);
  }

  /** Versions the item has had since it was generated or inserted: 0 for an untouched item. */
  revision(index: number): number {
    return this.updated.size === 0 ? 0 : (this.updated.get(index)?.revision ?? 0);
  }

  /** Records a new version of the item at `at`; the platform's `lastUpdatedTime` never goes back. */
  update(index: number, generated: number, at: number): void {
    if (!Number.isInteger(index) || index < 0 || index >= this.count) {
      throw new RangeError(`${this.resource}: no item at index ${index} (the set has ${this.count})`);
    }
    const current = this.lastUpdatedTime(index, generated);
    if (!Number.isInteger(at) || at < current) {
      throw new RangeError(`${this.resource}[${index}]: lastUpdatedTime ${at} is before the current ${current}`);
    }
    this.updated.set(index, { at, revision: this.revision(index) + 1 });
  }

  /**
   * Adds an item after the last one, created at `at` (or at the last insert's time, when that is
   * later: indexes and creation times keep one order); returns its index.
   */
  insert(at: number): number {
    if (!Number.isInteger(at)) throw new RangeError(`${this.resource}: an insert at ${at} is not a time in ms`);
    this.insertedAt.push(Math.max(at, this.insertedAt.at(-1) ?? at));
    return this.count - 1;
  }
}

/** The description of an item's `revision`-th version (`revision` > 0): what an update changes besides the time. */
export function revisedDescription(description: string | undefined, revision: number): string {
  return `${description ?? 'updated'} (revision ${revision})`;
}

/**
 * What every collection of the simulator shares: its Revisions, and from them how many items it
 * has now, how many were generated from the seed, and the insert of a new one.
 */
export abstract class RevisedSet {
  protected readonly revisions: Revisions;

  constructor(resource: string, generated: number) {
    this.revisions = new Revisions(resource, generated);
  }

  /** Items now: those generated from the seed, then those inserted since. */
  get count(): number {
    return this.revisions.count;
  }

  /** Items generated from the seed (indexes below it); other collections link only to these. */
  get generated(): number {
    return this.revisions.generated;
  }

  /** A new item created at `at`, after the last; returns its index. */
  insert(at: number): number {
    return this.revisions.insert(at);
  }
}
