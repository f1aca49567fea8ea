import { type Resource, resourceSpec } from '../../resources/index.js';
import { hash3, Rng } from '../random.js';
import type { Links } from './links.js';
import { type ListFilter, matchesItem } from './match.js';
import { RevisedSet, revisedDescription } from './revisions.js';
import { TIME_BASE_MS, TIME_SPAN_MS } from './shared.js';

const DAY_MS = 86_400_000;

/**
 * `count` items of a collection, each a pure function of (seed, index): nothing is stored but the
 * updates and inserts made since, so ten million items cost no more memory than ten. Filters are
 * checked on the item served, with the platform's meaning (match.ts).
 */
export abstract class ItemSet<T extends { lastUpdatedTime: number }> extends RevisedSet {
  protected readonly rng = new Rng();

  constructor(
    readonly resource: Resource,
    protected readonly seed: number,
    generated: number,
    protected readonly links: Links,
    private readonly salt: number,
  ) {
    super(resource, generated);
  }

  abstract externalIdOf(index: number): string;

  /** The item at `index` as generated from the seed; `includeMetadata: false` leaves its metadata out. */
  protected abstract generate(index: number, includeMetadata: boolean): T;

  /** The item at `index`, as it is now; `includeMetadata: false` leaves its metadata out (GET's includeMetadata). */
  item(index: number, includeMetadata = true): T {
    const item = this.generate(index, includeMetadata);
    const revision = this.revisions.revision(index);
    if (revision > 0) this.revise(item, revision);
    return item;
  }

  /** What an update changes besides `lastUpdatedTime`: the description. */
  protected revise(item: T, revision: number): void {
    const described = item as T & { description?: string };
    described.description = revisedDescription(described.description, revision);
  }

  matches(index: number, filter: ListFilter): boolean {
    return matchesItem(resourceSpec(this.resource), this.item(index), filter, this.links);
  }

  /** A new version of the item: its `lastUpdatedTime` becomes `at`, as the platform does on an update. */
  update(index: number, at: number): void {
    const current = index >= 0 && index < this.count ? this.item(index, false).lastUpdatedTime : 0;
    this.revisions.update(index, current, at);
  }

  /** The item's random stream, from its start. */
  protected start(index: number): Rng {
    return this.rng.reset(hash3(this.seed, index, this.salt));
  }

  /** createdTime, and lastUpdatedTime (the newest version's) after it. */
  protected times(index: number, rng: Rng): { createdTime: number; lastUpdatedTime: number } {
    const createdTime = TIME_BASE_MS + rng.int(TIME_SPAN_MS);
    const updated = rng.next();
    const generated = createdTime + (updated < 0.3 ? 0 : Math.floor(updated * 365 * DAY_MS));
    return {
      createdTime: this.revisions.createdTime(index, createdTime),
      lastUpdatedTime: this.revisions.lastUpdatedTime(index, generated),
    };
  }

  /** An existing asset's id, or undefined when there are no assets. */
  protected assetId(rng: Rng): number | undefined {
    const { assets } = this.links;
    return assets.generated === 0 ? undefined : assets.idOf(rng.int(assets.generated));
  }

  /** Up to `most` distinct existing asset ids. */
  protected assetIds(rng: Rng, most: number): number[] {
    const wanted = rng.int(most + 1);
    const ids: number[] = [];
    for (let attempt = 0; ids.length < wanted && attempt < 8; attempt++) {
      const id = this.assetId(rng);
      if (id !== undefined && !ids.includes(id)) ids.push(id);
    }
    return ids;
  }

  /** With probability `p`, an existing data set's id. */
  protected dataSetId(rng: Rng, p: number): number | undefined {
    if (!rng.chance(p)) return undefined;
    const index = rng.int(Math.max(this.links.dataSets, 1));
    return this.links.dataSets === 0 ? undefined : this.links.dataSetIdOf(index);
  }
}

/** `PREFIX-000000`: index in base 36, upper case, at least six digits. */
export function externalIdAt(prefix: string, index: number): string {
  return `${prefix}-${index.toString(36).toUpperCase().padStart(6, '0')}`;
}
