import { hash3, Rng } from '../random.js';
import { RevisedSet, revisedDescription } from './revisions.js';
import { resourceSpec } from '../../resources/index.js';
import { DATA_SET_ID_BASE, type LinkedAssets, Links } from './links.js';
import { type ListFilter, matchesItem, needsItem } from './match.js';
import { addSecondLabel, generateGeoLocation, type GeoLocation, generateMetadata, holdsMetadata, type MetadataFilter, TIME_BASE_MS, TIME_SPAN_MS } from './shared.js';
import { ASSET_KINDS, DESCRIPTIONS, LABELS, SOURCES } from './vocabulary.js';

/** Asset ids are `ASSET_ID_BASE + index * ASSET_ID_STRIDE`: above 2^32, below 2^53, unique. */
export const ASSET_ID_BASE = 3_000_000_000_000_000;
export const ASSET_ID_STRIDE = 9973;

const DAY_MS = 86_400_000;
const SALT = 0xa55e;

export interface GeneratedAsset {
  id: number;
  externalId: string;
  name: string;
  parentId?: number;
  parentExternalId?: string;
  rootId: number;
  description?: string;
  metadata?: Record<string, string>;
  source?: string;
  dataSetId?: number;
  labels?: { externalId: string }[];
  geoLocation?: GeoLocation;
  createdTime: number;
  lastUpdatedTime: number;
}

/** The filters `matches` checks without the links (the others need `matchesItem`). */
export const ASSET_FAST_FILTERS = new Set(['source', 'minLastUpdatedTime', 'maxLastUpdatedTime', 'externalIdPrefix', 'metadata']);

/** The filters checked without generating the whole item, typed (a ListFilter). */
export type AssetFilter = {
  source?: string;
  minLastUpdatedTime?: number;
  maxLastUpdatedTime?: number;
  externalIdPrefix?: string;
};

/**
 * `count` assets forming trees of `treeSize` consecutive indexes: the first of each block is the
 * root, every other asset's parent is an earlier asset of its block, so depth and fan-out vary.
 */
export class AssetSet extends RevisedSet implements LinkedAssets {
  readonly resource = 'assets';
  private readonly rng = new Rng();
  /** This set and the data sets: what filters on assets follow (subtrees, roots, parents). */
  readonly links: Links;

  constructor(
    private readonly seed: number,
    generated: number,
    private readonly treeSize: number,
    private readonly dataSets = 5,
  ) {
    super('assets', generated);
    this.links = new Links(this, dataSets);
  }

  idOf(index: number): number {
    return ASSET_ID_BASE + index * ASSET_ID_STRIDE;
  }

  externalIdOf(index: number): string {
    return `AS-${index.toString(36).toUpperCase().padStart(6, '0')}`;
  }

  /** The index of the asset with this id, or undefined when there is none. */
  indexOfId(id: number): number | undefined {
    const index = (id - ASSET_ID_BASE) / ASSET_ID_STRIDE;
    return Number.isInteger(index) && index >= 0 && index < this.count ? index : undefined;
  }

  indexOfExternalId(externalId: string): number | undefined {
    const match = /^AS-([0-9A-Z]{6,})$/.exec(externalId);
    if (match === null) return undefined;
    const index = Number.parseInt(match[1]!, 36);
    return index < this.count && this.externalIdOf(index) === externalId ? index : undefined;
  }

  rootIndexOf(index: number): number {
    return index - (index % this.treeSize);
  }

  /** Whether the asset at `index` is `top` or one of its descendants. */
  inSubtree(index: number, top: number): boolean {
    if (this.rootIndexOf(index) !== this.rootIndexOf(top) || index < top) return false;
    for (let at: number | undefined = index; at !== undefined; at = this.parentIndexOf(at)) {
      if (at === top) return true;
      if (at < top) return false;
    }
    return false;
  }

  private parentIndexOf(index: number): number | undefined {
    const parentId = this.item(index, false).parentId;
    return parentId === undefined ? undefined : this.indexOfId(parentId);
  }

  /** A new version of the item: its `lastUpdatedTime` becomes `at`, as the platform does on an update. */
  update(index: number, at: number): void {
    const inRange = index >= 0 && index < this.count;
    const generated = inRange ? this.times(this.rng.reset(hash3(this.seed, index, SALT)))[1] : 0;
    this.revisions.update(index, generated, at);
  }

  matches(index: number, filter: ListFilter): boolean {
    if (!this.matchesFast(index, filter)) return false;
    return !needsItem(filter, ASSET_FAST_FILTERS) || matchesItem(resourceSpec('assets'), this.item(index), filter, this.links);
  }

  private matchesFast(index: number, filter: Readonly<AssetFilter & MetadataFilter>): boolean {
    const prefix = filter.externalIdPrefix;
    if (prefix !== undefined && !this.externalIdOf(index).startsWith(prefix)) return false;
    if (filter.metadata !== undefined || filter.source !== undefined) {
      // Drawn after the name and times: the whole asset is generated only when they are asked about.
      const asset = this.item(index);
      if (!holdsMetadata(asset.metadata, filter.metadata)) return false;
      if (filter.source !== undefined && asset.source !== filter.source) return false;
    }
    if (filter.minLastUpdatedTime === undefined && filter.maxLastUpdatedTime === undefined) return true;
    this.rng.reset(hash3(this.seed, index, SALT));
    const lastUpdatedTime = this.revisions.lastUpdatedTime(index, this.times(this.rng)[1]);
    return (
      (filter.minLastUpdatedTime === undefined || lastUpdatedTime >= filter.minLastUpdatedTime) &&
      (filter.maxLastUpdatedTime === undefined || lastUpdatedTime <= filter.maxLastUpdatedTime)
    );
  }

  item(index: number, includeMetadata = true): GeneratedAsset {
    const rng = this.rng.reset(hash3(this.seed, index, SALT));
    const [generatedCreated, generated] = this.times(rng);
    const createdTime = this.revisions.createdTime(index, generatedCreated);
    const lastUpdatedTime = this.revisions.lastUpdatedTime(index, generated);
    const rootIndex = index - (index % this.treeSize);
    const kind = rng.pick(ASSET_KINDS);
    const asset: GeneratedAsset = {
      id: this.idOf(index),
      externalId: this.externalIdOf(index),
      name: `${kind} ${rng.int(100)}-${String.fromCharCode(65 + rng.int(26))}-${rng.int(10_000)}`,
      rootId: this.idOf(rootIndex),
      createdTime,
      lastUpdatedTime,
    };
    if (index !== rootIndex) asset.parentId = this.idOf(rootIndex + rng.int(index - rootIndex));
    if (rng.chance(0.6)) asset.description = rng.pick(DESCRIPTIONS);
    if (rng.chance(0.8)) asset.source = rng.pick(SOURCES);
    if (rng.chance(0.9)) {
      const dataSet = rng.int(Math.max(this.dataSets, 1));
      if (this.dataSets > 0) asset.dataSetId = DATA_SET_ID_BASE + dataSet;
    }
    if (rng.chance(0.2)) asset.labels = [{ externalId: rng.pick(LABELS) }];
    const metadata = generateMetadata(rng);
    if (includeMetadata) asset.metadata = metadata;
    // Drawn after the fields above, so that they keep their values for a seed.
    const parentIndex = asset.parentId === undefined ? undefined : this.indexOfId(asset.parentId);
    if (parentIndex !== undefined && rng.chance(0.5)) asset.parentExternalId = this.externalIdOf(parentIndex);
    if (rng.chance(0.1)) asset.geoLocation = generateGeoLocation(rng);
    addSecondLabel(rng, asset.labels);
    const revision = this.revisions.revision(index);
    if (revision > 0) asset.description = revisedDescription(asset.description, revision);
    return asset;
  }

  private times(rng: Rng): [number, number] {
    const createdTime = TIME_BASE_MS + rng.int(TIME_SPAN_MS);
    const updated = rng.next();
    return [createdTime, createdTime + (updated < 0.3 ? 0 : Math.floor(updated * 365 * DAY_MS))];
  }
}
