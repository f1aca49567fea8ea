import type { Resource } from '../../resources/index.js';
import { type Clock, systemClock } from '../../util/clock.js';
import { mix32 } from '../random.js';
import { type AssetFilter, AssetSet, type GeneratedAsset } from './assets.js';
import { DatapointSet } from '../datapoints/index.js';
import { type EventFilter, EventSet, type GeneratedEvent } from './events.js';
import { FileSet, type GeneratedFile } from './files.js';
import { type GeneratedRelationship, RelationshipSet } from './relationships.js';
import { type GeneratedSequence, SequenceSet } from './sequences.js';
import { type GeneratedTimeseries, type SeriesNodes, TimeseriesSet } from './timeseries.js';

/** A collection the simulator serves: every collection of the registry in resources/. */
export type ResourceName = Resource;

export interface DatasetOptions {
  /** Any integer; equal seeds give byte-identical data. */
  seed: number;
  assets: number;
  events: number;
  timeseries?: number;
  files?: number;
  sequences?: number;
  relationships?: number;
  /** Data sets the items belong to (`dataSetId`). Default 5. */
  dataSets?: number;
  /** Characters of the `padding` metadata value added to every event; 0 (default) adds none. */
  eventMetadataBytes?: number;
  /** Assets per tree (a root and its descendants). Default 100. */
  treeSize?: number;
  /** Datapoints in all the time series together at the start (a few long series, many short, some empty). Default 0. */
  datapoints?: number;
  /**
   * The datapoints' time: its now when the dataset is made is the start, which the series' points
   * are laid out around; a live series' points reach its now. Default: the system clock.
   */
  clock?: Pick<Clock, 'now'>;
  /** Changes a second `--churn` makes to the datapoints (the collections' are made apart). Default 0. */
  churn?: number;
  /** The data-model nodes that are time series (their `instanceId`); default none. */
  seriesNodes?: SeriesNodes;
}

/** Everything the simulator serves, generated on demand from the seed. */
export interface Dataset {
  readonly assets: AssetSet;
  readonly events: EventSet;
  readonly timeseries: TimeseriesSet;
  readonly files: FileSet;
  readonly sequences: SequenceSet;
  readonly relationships: RelationshipSet;
  /** The points inside the time series (`POST /timeseries/data/list`); not a collection of its own. */
  readonly datapoints: DatapointSet;
}

export function createDataset(options: DatasetOptions): Dataset {
  const seed = mix32(options.seed);
  const assets = new AssetSet(seed, options.assets, options.treeSize ?? 100, options.dataSets ?? 5);
  const { links } = assets;
  const events = new EventSet(seed, options.events, links, options.eventMetadataBytes ?? 0);
  const timeseries = new TimeseriesSet(seed, options.timeseries ?? 0, links, options.seriesNodes);
  const files = new FileSet(seed, options.files ?? 0, links);
  const sequences = new SequenceSet(seed, options.sequences ?? 0, links);
  const relationships = new RelationshipSet(seed, options.relationships ?? 0, links, [
    { type: 'asset', count: assets.count, externalIdOf: (index) => assets.externalIdOf(index) },
    { type: 'event', count: events.count, externalIdOf: (index) => events.externalIdOf(index) },
    { type: 'timeSeries', count: timeseries.count, externalIdOf: (index) => timeseries.externalIdOf(index) },
    { type: 'file', count: files.count, externalIdOf: (index) => files.externalIdOf(index) },
    { type: 'sequence', count: sequences.count, externalIdOf: (index) => sequences.externalIdOf(index) },
  ]);
  const { datapoints: total = 0, clock = systemClock, churn = 0 } = options;
  const datapoints = new DatapointSet(seed, timeseries, total, clock, churn);
  return { assets, events, timeseries, files, sequences, relationships, datapoints };
}

export type { FilterValue, ListFilter } from './match.js';
export type { Ref } from './links.js';
export type {
  AssetFilter,
  EventFilter,
  GeneratedAsset,
  GeneratedEvent,
  GeneratedFile,
  GeneratedRelationship,
  GeneratedSequence,
  GeneratedTimeseries,
  SeriesNodes,
};
