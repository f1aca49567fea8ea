import { hash3, Rng } from '../random.js';
import { ASSET_KINDS, DESCRIPTIONS, EVENT_TYPES, METADATA_KEYS, METADATA_WORDS, SOURCES, UNITS } from '../dataset/vocabulary.js';
import { CORE_SPACE, SIM_SPACE } from './core-model.js';
import {
  decimal,
  generatedTimes,
  isoDate,
  isoTimestamp,
  maybe,
  type NodeRef,
  quarters,
  timeAfter,
  words,
} from './instance-values.js';
import type { InstanceKind, NodeLinks } from './node-links.js';

/** Property values by container (`space:externalId`), then by container property. */
export type ContainerData = Record<string, Record<string, unknown>>;

/** What a kind's generator makes of an index, besides its identity and times. */
export interface GeneratedBody {
  type?: NodeRef;
  startNode?: NodeRef;
  endNode?: NodeRef;
  data: ContainerData;
}

/**
 * One kind of instance, generated on demand: each a pure function of (seed, index), and of
 * `revision` (how many times the simulator changed it) for the properties a change re-draws.
 */
export interface KindGenerator {
  readonly kind: InstanceKind;
  /** The containers every instance of the kind has data in (`space:externalId`). */
  readonly containers: readonly string[];
  spaceOf(index: number): string;
  times(index: number): { createdTime: number; lastUpdatedTime: number; version: number };
  body(index: number, revision: number, createdTime: number): GeneratedBody;
}

const DESCRIBABLE = `${CORE_SPACE}:CogniteDescribable`;
const SOURCEABLE = `${CORE_SPACE}:CogniteSourceable`;
const SCHEDULABLE = `${CORE_SPACE}:CogniteSchedulable`;
const ASSET = `${CORE_SPACE}:CogniteAsset`;
const ACTIVITY = `${CORE_SPACE}:CogniteActivity`;
const TIME_SERIES = `${CORE_SPACE}:CogniteTimeSeries`;
const ACTIVITY_LINK = `${SIM_SPACE}:ActivityLink`;

/** The edges' type: a node of the user space. */
export const EDGE_TYPE: NodeRef = { space: SIM_SPACE, externalId: 'assetActivity' };
const ACTIVITY_TYPES = ['workOrder', 'inspection', 'maintenance'];

/** The two random streams of an instance: `fixed` for what never changes, `changing` per revision. */
class Streams {
  readonly fixed = new Rng();
  readonly changing = new Rng();

  constructor(
    private readonly seed: number,
    private readonly salt: number,
  ) {}

  times(index: number): Rng {
    return this.fixed.reset(hash3(this.seed, index, this.salt));
  }

  start(index: number, revision: number): { fixed: Rng; changing: Rng } {
    this.fixed.reset(hash3(this.seed, index, this.salt + 1));
    this.changing.reset(hash3(hash3(this.seed, index, this.salt + 2), revision, 0x5eed));
    return { fixed: this.fixed, changing: this.changing };
  }
}

function describable(fixed: Rng, changing: Rng, name: string): Record<string, unknown> {
  return {
    name,
    description: maybe(changing, 0.6, () => changing.pick(DESCRIPTIONS)),
    tags: maybe(changing, 0.9, () => words(changing, 3)),
    aliases: maybe(fixed, 0.4, () => words(fixed, 2)),
  };
}

function sourceable(rng: Rng, createdTime: number): Record<string, unknown> {
  const sourceCreated = createdTime - rng.int(1000) * 86_400_000;
  return {
    sourceId: maybe(rng, 0.8, () => `${rng.pick(['SAP', 'PI', 'MX'])}-${rng.int(1_000_000)}`),
    sourceContext: maybe(rng, 0.3, () => rng.pick(SOURCES)),
    sourceCreatedTime: maybe(rng, 0.7, () => isoTimestamp(sourceCreated)),
    sourceUpdatedTime: maybe(rng, 0.5, () => isoTimestamp(timeAfter(rng, sourceCreated, 500))),
  };
}

/** A JSON value as people put in free-form attributes: mostly an object, now and then an array. */
function attributes(rng: Rng): unknown {
  if (rng.chance(0.05)) return [rng.int(100), rng.pick(METADATA_WORDS), null, { nested: true }];
  return {
    [rng.pick(METADATA_KEYS)]: rng.pick(METADATA_WORDS),
    serial: rng.int(1_000_000),
    limits: { min: decimal(rng, 10), max: 10 + decimal(rng, 100) },
    labels: words(rng, 2),
    retired: rng.chance(0.1) ? null : false,
  };
}

function assets(seed: number, links: NodeLinks): KindGenerator {
  const streams = new Streams(seed, 0xa5e7);
  return {
    kind: 'asset',
    containers: [DESCRIBABLE, SOURCEABLE, ASSET],
    spaceOf: (index) => links.spaceOf('asset', index),
    times: (index) => generatedTimes(streams.times(index)),
    body: (index, revision, createdTime) => {
      const { fixed, changing } = streams.start(index, revision);
      const parent = links.parentIndexOf(index);
      const name = `${fixed.pick(ASSET_KINDS)} ${fixed.int(100)}-${String.fromCharCode(65 + fixed.int(26))}`;
      return {
        data: {
          [DESCRIBABLE]: describable(fixed, changing, name),
          [SOURCEABLE]: sourceable(fixed, createdTime),
          [ASSET]: {
            assetHierarchy_parent: parent === undefined ? null : links.ref('asset', parent),
            assetHierarchy_root: links.ref('asset', links.rootIndexOf(index)),
            assetHierarchy_path: links.pathOf(index),
            assetHierarchy_path_last_updated_time: isoTimestamp(createdTime),
            criticality: maybe(changing, 0.8, () => (changing.chance(0.02) ? 2_147_483_647 : 1 + changing.int(5))),
            installationDate: maybe(fixed, 0.7, () => isoDate(createdTime - fixed.int(3000) * 86_400_000)),
            operational: maybe(changing, 0.9, () => changing.chance(0.85)),
            extendedAttributes: maybe(fixed, 0.7, () => attributes(fixed)),
          },
        },
      };
    },
  };
}

function activities(seed: number, links: NodeLinks): KindGenerator {
  const streams = new Streams(seed, 0xac70);
  return {
    kind: 'activity',
    containers: [DESCRIBABLE, SOURCEABLE, SCHEDULABLE, ACTIVITY],
    spaceOf: (index) => links.spaceOf('activity', index),
    times: (index) => generatedTimes(streams.times(index)),
    body: (index, revision, createdTime) => {
      const { fixed, changing } = streams.start(index, revision);
      const type = fixed.chance(0.8) ? { space: SIM_SPACE, externalId: fixed.pick(ACTIVITY_TYPES) } : undefined;
      const start = timeAfter(fixed, createdTime, 30);
      return {
        ...(type === undefined ? {} : { type }),
        data: {
          [DESCRIBABLE]: describable(fixed, changing, `${fixed.pick(EVENT_TYPES)} ${fixed.int(100_000)}`),
          [SOURCEABLE]: sourceable(fixed, createdTime),
          [SCHEDULABLE]: {
            startTime: isoTimestamp(start),
            endTime: maybe(changing, 0.75, () => isoTimestamp(timeAfter(changing, start, 10))),
            scheduledStartTime: maybe(fixed, 0.5, () => isoTimestamp(start - fixed.int(5 * 86_400_000))),
            scheduledEndTime: maybe(fixed, 0.5, () => isoTimestamp(timeAfter(fixed, start, 12))),
          },
          [ACTIVITY]: {
            assets: links.some(fixed, 'asset', 4),
            timeSeries: links.some(fixed, 'timeseries', 3),
            workOrderNumber: maybe(fixed, 0.9, () =>
              fixed.chance(0.01) ? Number.MAX_SAFE_INTEGER : 2 ** 40 + fixed.int(2 ** 30)),
            laborHours: maybe(changing, 0.8, () => quarters(changing, 200)),
          },
        },
      };
    },
  };
}

function timeseries(seed: number, links: NodeLinks): KindGenerator {
  const streams = new Streams(seed, 0xc75e);
  return {
    kind: 'timeseries',
    containers: [DESCRIBABLE, SOURCEABLE, TIME_SERIES],
    spaceOf: (index) => links.spaceOf('timeseries', index),
    times: (index) => generatedTimes(streams.times(index)),
    body: (index, revision, createdTime) => {
      const { fixed, changing } = streams.start(index, revision);
      const isString = fixed.chance(0.1);
      return {
        data: {
          [DESCRIBABLE]: describable(fixed, changing, `${fixed.pick(ASSET_KINDS)} ${fixed.int(100)}.PV-${fixed.int(10_000)}`),
          [SOURCEABLE]: sourceable(fixed, createdTime),
          [TIME_SERIES]: {
            isStep: isString || fixed.chance(0.2),
            type: isString ? 'string' : 'numeric',
            sourceUnit: isString ? null : maybe(fixed, 0.8, () => fixed.pick(UNITS)),
            assets: links.some(fixed, 'asset', 2),
            sampleRateHz: maybe(changing, 0.7, () => Math.abs(decimal(changing, 100))),
            thresholds: maybe(changing, 0.7, () =>
              Array.from({ length: changing.int(4) }, () => decimal(changing, 1000))),
          },
        },
      };
    },
  };
}

/** Edges from an asset to an activity, in the space of their start node. */
function edges(seed: number, links: NodeLinks): KindGenerator {
  const streams = new Streams(seed, 0xed6e);
  const startIndex = (index: number) => hash3(seed, index, 0x57a7) % Math.max(links.counts.asset, 1);
  return {
    kind: 'edge',
    containers: [ACTIVITY_LINK],
    spaceOf: (index) => links.spaceOf('asset', startIndex(index)),
    times: (index) => generatedTimes(streams.times(index)),
    body: (index, revision, createdTime) => {
      const { fixed, changing } = streams.start(index, revision);
      const endIndex = fixed.int(Math.max(links.counts.activity, 1));
      return {
        type: EDGE_TYPE,
        startNode: links.ref('asset', startIndex(index)),
        endNode: links.ref('activity', endIndex),
        data: {
          [ACTIVITY_LINK]: {
            role: maybe(changing, 0.9, () => changing.pick(['performer', 'subject', 'observer', 'Überwacher'])),
            weight: decimal(changing, 1),
            linkedTime: isoTimestamp(createdTime),
          },
        },
      };
    },
  };
}

export function createGenerators(seed: number, links: NodeLinks): Readonly<Record<InstanceKind, KindGenerator>> {
  return {
    asset: assets(seed, links),
    activity: activities(seed, links),
    timeseries: timeseries(seed, links),
    edge: edges(seed, links),
  };
}
