import { type FilterSpec, LABEL_MATCHES, type LabelFilterValue, type ResourceSpec } from '../../resources/index.js';
import type { Links, Ref } from './links.js';
import { holdsMetadata } from './shared.js';

/** A filter value as parsed from a query or a body (see FilterSpec): numbers, text, lists, a map. */
export type FilterValue =
  | number |
  string |
  boolean |
  readonly number[] |
  readonly string[] |
  readonly Ref[] |
  Readonly<Record<string, string>> |
  LabelFilterValue;

/** A list or count filter: the collection's filter keys (resources/) and their values. */
export type ListFilter = Readonly<Record<string, FilterValue>>;

type Item = Readonly<Record<string, unknown>>;

/** Whether a filter sets a key outside `fast` (the keys a set checks without generating the item). */
export function needsItem(filter: ListFilter, fast: ReadonlySet<string>): boolean {
  for (const key in filter) if (!fast.has(key)) return true;
  return false;
}

/**
 * Whether a generated item passes every filter set, with the platform's meaning for each: ranges
 * inclusive (an item without the field fails them), lists match any entry, links are followed
 * through the assets and data sets the item names.
 */
export function matchesItem(spec: ResourceSpec, item: object, filter: ListFilter, links: Links): boolean {
  for (const filterSpec of spec.filters) {
    const value = filter[filterSpec.key];
    if (value !== undefined && !passes(spec.name, filterSpec, value, item as Item, links)) return false;
  }
  return true;
}

function passes(resource: string, spec: FilterSpec, value: FilterValue, item: Item, links: Links): boolean {
  switch (spec.kind) {
    case 'time':
    case 'number':
      return inRange(spec.field, spec.bound, value as number, item);
    case 'string':
      if (spec.key === 'externalIdPrefix') return typeof item.externalId === 'string' && item.externalId.startsWith(value as string);
      if (spec.key === 'directoryPrefix') return typeof item.directory === 'string' && item.directory.startsWith(value as string);
      return item[spec.field] === value;
    case 'boolean':
      return spec.key === 'root' ? (item.parentId === undefined) === value : item[spec.field] === value;
    case 'ids':
    case 'refs':
    case 'strings':
      return matchesList(resource, spec.key, value as readonly (number | string | Ref)[], item, links);
    case 'map':
      return holdsMetadata(item.metadata as Record<string, string> | undefined, value as Record<string, string>);
    case 'isNull':
      return (item[spec.field] === undefined) === value;
    case 'labels':
      return holdsLabels(item.labels as readonly { externalId: string }[] | undefined, value as LabelFilterValue);
  }
}

/** `containsAny`: the item has at least one of the labels; `containsAll`: every one of them. */
function holdsLabels(labels: readonly { externalId: string }[] | undefined, filter: LabelFilterValue): boolean {
  const held = new Set((labels ?? []).map((entry) => entry.externalId));
  const [match] = LABEL_MATCHES.filter((name) => filter[name] !== undefined);
  const wanted = (match === undefined ? undefined : filter[match]) ?? [];
  return match === 'containsAll'
    ? wanted.every((entry) => held.has(entry.externalId))
    : wanted.some((entry) => held.has(entry.externalId));
}

function inRange(field: string, bound: 'min' | 'max', limit: number, item: Item): boolean {
  if (field === 'activeAtTime') {
    // Active at some time in [min, max]: started no later than max, not ended before min.
    const start = item.startTime as number | undefined;
    const end = item.endTime as number | undefined;
    return bound === 'max' ? start !== undefined && start <= limit : end === undefined || end >= limit;
  }
  const actual = item[field];
  if (typeof actual !== 'number') return false;
  return bound === 'min' ? actual >= limit : actual <= limit;
}

/** The ids of the assets an item is linked to (an asset: itself). */
function assetIdsOf(resource: string, item: Item): number[] {
  if (resource === 'assets') return [item.id as number];
  if (Array.isArray(item.assetIds)) return item.assetIds as number[];
  return item.assetId === undefined ? [] : [item.assetId as number];
}

function asRefs(entries: readonly (number | string | Ref)[]): Ref[] {
  return entries.map((entry) => (typeof entry === 'number' ? { id: entry } : (entry as Ref)));
}

type Entries = readonly (number | string | Ref)[];

/** A filter's list as a set, made once per filter (events take 5000 asset ids, checked per item). */
const sets = new WeakMap<Entries, ReadonlySet<number | string | Ref>>();
function setOf(entries: Entries): ReadonlySet<number | string | Ref> {
  let set = sets.get(entries);
  if (set === undefined) sets.set(entries, (set = new Set(entries)));
  return set;
}

function matchesList(resource: string, key: string, entries: Entries, item: Item, links: Links): boolean {
  const { assets } = links;
  switch (key) {
    case 'dataSetIds':
      return item.dataSetId !== undefined && links.dataSetIds(asRefs(entries)).has(item.dataSetId as number);
    case 'assetIds': {
      const ids = setOf(entries);
      return assetIdsOf(resource, item).some((id) => ids.has(id));
    }
    case 'parentIds':
      return item.parentId !== undefined && (entries as readonly number[]).includes(item.parentId as number);
    case 'assetExternalIds': {
      const externalIds = setOf(entries);
      return assetIdsOf(resource, item).some((id) => {
        const index = assets.indexOfId(id);
        return index !== undefined && externalIds.has(assets.externalIdOf(index));
      });
    }
    case 'parentExternalIds': {
      const parent = item.parentId === undefined ? undefined : assets.indexOfId(item.parentId as number);
      return parent !== undefined && (entries as readonly string[]).includes(assets.externalIdOf(parent));
    }
    case 'rootIds':
    case 'rootAssetIds': {
      const roots = new Set(links.assetIndexes(asRefs(entries)).map((index) => assets.idOf(index)));
      return assetIdsOf(resource, item).some((id) => {
        const index = assets.indexOfId(id);
        return index !== undefined && roots.has(assets.idOf(assets.rootIndexOf(index)));
      });
    }
    case 'assetSubtreeIds': {
      const tops = links.assetIndexes(asRefs(entries));
      return assetIdsOf(resource, item).some((id) => {
        const index = assets.indexOfId(id);
        return index !== undefined && tops.some((top) => assets.inSubtree(index, top));
      });
    }
    default: {
      // Relationships: sourceExternalIds, targetTypes, ... name the item's field in the singular.
      const field = item[key.slice(0, -1)];
      return (entries as readonly string[]).includes(field as string);
    }
  }
}
