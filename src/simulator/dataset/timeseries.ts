import type { Links } from './links.js';
import { externalIdAt, ItemSet } from './item-set.js';
import { generateMetadata } from './shared.js';
import { ASSET_KINDS, DESCRIPTIONS, UNIT_EXTERNAL_IDS, UNITS } from './vocabulary.js';

/** Time series ids are `TIMESERIES_ID_BASE + index * TIMESERIES_ID_STRIDE`: above 2^32, below 2^53, unique. */
export const TIMESERIES_ID_BASE = 7_000_000_000_000_000;
export const TIMESERIES_ID_STRIDE = 7907;

export interface GeneratedTimeseries {
  id: number;
  externalId?: string;
  instanceId?: { space: string; externalId: string };
  name?: string;
  isString: boolean;
  type: 'numeric' | 'string';
  metadata?: Record<string, string>;
  unit?: string;
  unitExternalId?: string;
  assetId?: number;
  isStep: boolean;
  description?: string;
  securityCategories?: number[];
  dataSetId?: number;
  createdTime: number;
  lastUpdatedTime: number;
}

/** A data-model node's key: `{space, externalId}`. */
export interface NodeId {
  space: string;
  externalId: string;
}

/**
 * The data-model nodes that are time series (CogniteTimeSeries): series `index` is the node
 * `refOf(index)`, when it is one, and carries it as its `instanceId`. The models room gives them
 * (InstanceStore.seriesNodes), so that the instances and the timeseries collection agree.
 */
export interface SeriesNodes {
  refOf(index: number): NodeId | undefined;
  /** The series index of a node, or undefined when the node is not a time series. */
  indexOf(ref: NodeId): number | undefined;
}

const NO_NODES: SeriesNodes = { refOf: () => undefined, indexOf: () => undefined };

/**
 * Time series, most on an asset (`assetId`); a tenth are string series. Those that are
 * data-model nodes (`nodes`) carry the node's key as `instanceId`, and are found by it.
 */
export class TimeseriesSet extends ItemSet<GeneratedTimeseries> {
  constructor(seed: number, count: number, links: Links, private readonly nodes: SeriesNodes = NO_NODES) {
    super('timeseries', seed, count, links, 0x75e7);
  }

  /** The series whose `instanceId` is `ref`, or undefined when none is. */
  indexOfInstance(ref: NodeId): number | undefined {
    const index = this.nodes.indexOf(ref);
    return index !== undefined && index >= 0 && index < this.count ? index : undefined;
  }

  idOf(index: number): number {
    return TIMESERIES_ID_BASE + index * TIMESERIES_ID_STRIDE;
  }

  externalIdOf(index: number): string {
    return externalIdAt('TS', index);
  }

  protected generate(index: number, includeMetadata: boolean): GeneratedTimeseries {
    const rng = this.start(index);
    const times = this.times(index, rng);
    const isString = rng.chance(0.1);
    const series: GeneratedTimeseries = {
      id: this.idOf(index),
      isString,
      type: isString ? 'string' : 'numeric',
      isStep: isString || rng.chance(0.2),
      ...times,
    };
    // Nearly every series has an externalId; a few are named only by their id.
    if (rng.chance(0.97)) series.externalId = this.externalIdOf(index);
    if (rng.chance(0.95)) series.name = `${rng.pick(ASSET_KINDS)} ${rng.int(100)}.PV-${rng.int(10_000)}`;
    if (!isString && rng.chance(0.8)) {
      const unit = rng.pick(UNITS);
      series.unit = unit;
      const unitExternalId = UNIT_EXTERNAL_IDS[unit];
      if (unitExternalId !== undefined && rng.chance(0.7)) series.unitExternalId = unitExternalId;
    }
    const assetId = rng.chance(0.9) ? this.assetId(rng) : undefined;
    if (assetId !== undefined) series.assetId = assetId;
    if (rng.chance(0.5)) series.description = rng.pick(DESCRIPTIONS);
    if (rng.chance(0.05)) series.securityCategories = rng.chance(0.5) ? [] : [100 + rng.int(3)];
    const dataSetId = this.dataSetId(rng, 0.85);
    if (dataSetId !== undefined) series.dataSetId = dataSetId;
    // Drawn as before the series were tied to nodes, so that the fields after it keep their values.
    if (series.externalId !== undefined) rng.chance(0.1);
    const instanceId = this.nodes.refOf(index);
    if (instanceId !== undefined) series.instanceId = { ...instanceId };
    const metadata = generateMetadata(rng);
    if (includeMetadata) series.metadata = metadata;
    return series;
  }
}
