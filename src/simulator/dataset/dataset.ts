import type { Resource } from '../../resources/index.js';
import { mix32 } from '../random.js';
import { type AssetFilter, AssetSet, type GeneratedAsset } from './assets.js';
import { type EventFilter, EventSet, type GeneratedEvent } from './events.js';
import type { MetadataFilter } from './shared.js';

/** A collection the simulator serves: every collection of the registry in resources/. */
export type ResourceName = Resource;

export interface DatasetOptions {
  /** Any integer; equal seeds give byte-identical data. */
  seed: number;
  assets: number;
  events: number;
  /** Assets per tree (a root and its descendants). Default 100. */
  treeSize?: number;
}

/** Everything the simulator serves, generated on demand from the seed. */
export interface Dataset {
  readonly assets: AssetSet;
  readonly events: EventSet;
}

export function createDataset(options: DatasetOptions): Dataset {
  const seed = mix32(options.seed);
  const assets = new AssetSet(seed, options.assets, options.treeSize ?? 100);
  const events = new EventSet(seed, options.events, options.assets, (index) => assets.idOf(index));
  return { assets, events };
}

/** A filter of any collection's list or count: its own fields, plus metadata (POST only). */
export type ListFilter = EventFilter & AssetFilter & MetadataFilter;

export type { AssetFilter, EventFilter, GeneratedAsset, GeneratedEvent, MetadataFilter };
