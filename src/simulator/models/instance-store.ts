import { mix32 } from '../random.js';
import { ChangeLog } from './change-log.js';
import { type ContainerData, createGenerators, type KindGenerator } from './instance-generators.js';
import { externalIdAt, indexOfExternalId, type NodeRef } from './instance-values.js';
import { type InstanceKind, KINDS, NodeLinks, PREFIXES } from './node-links.js';

/** An instance as the platform keys it: instance type, space and externalId. */
export interface InstanceRef {
  instanceType: 'node' | 'edge';
  space: string;
  externalId: string;
}

export interface Instance extends InstanceRef {
  kind: InstanceKind;
  index: number;
  version: number;
  createdTime: number;
  lastUpdatedTime: number;
  /** Set once the instance is soft-deleted: lists leave it out, the sync feed shows it once. */
  deletedTime?: number;
  type?: NodeRef;
  startNode?: NodeRef;
  endNode?: NodeRef;
  data: ContainerData;
  /** The containers it has data in (`space:externalId`). */
  containers: readonly string[];
}

/** Instances generated per kind at start. */
export type InstanceCounts = Readonly<Record<'assets' | 'activities' | 'timeseries' | 'edges', number>>;

/** Positions keep kinds apart: `kind ordinal * 2^32 + index`, stable as kinds grow by inserts. */
export const KIND_STRIDE = 2 ** 32;

export function positionOf(kind: InstanceKind, index: number): number {
  return KINDS.indexOf(kind) * KIND_STRIDE + index;
}

export function kindAt(position: number): { kind: InstanceKind; index: number } {
  const ordinal = Math.floor(position / KIND_STRIDE);
  return { kind: KINDS[ordinal] ?? 'edge', index: position - ordinal * KIND_STRIDE };
}

interface Changed {
  /** Changes made to the properties since generation: the generators re-draw what changes. */
  revision: number;
  version: number;
  createdTime: number;
  lastUpdatedTime: number;
  deletedTime?: number;
}

/** One kind's instances: generated on demand; only what the simulator changed is stored. */
class KindSet {
  private readonly changed = new Map<number, Changed>();
  private inserted = 0;

  constructor(
    readonly generator: KindGenerator,
    readonly baseCount: number,
  ) {}

  get count(): number {
    return this.baseCount + this.inserted;
  }

  private state(index: number): Changed {
    return this.changed.get(index) ?? { revision: 0, ...this.generator.times(index) };
  }

  isDeleted(index: number): boolean {
    return this.changed.get(index)?.deletedTime !== undefined;
  }

  instance(index: number): Instance {
    const { kind, containers } = this.generator;
    const { revision, ...state } = this.state(index);
    return {
      instanceType: kind === 'edge' ? 'edge' : 'node',
      space: this.generator.spaceOf(index),
      externalId: externalIdAt(PREFIXES[kind], index),
      kind,
      index,
      ...state,
      ...this.generator.body(index, revision, state.createdTime),
      containers,
    };
  }

  /** A new version: the changing properties re-drawn, `lastUpdatedTime` = `at`. */
  update(index: number, at: number): void {
    const current = this.live(index, at);
    const next = { revision: current.revision + 1, version: current.version + 1, lastUpdatedTime: at };
    this.changed.set(index, { ...current, ...next });
  }

  /** A soft delete at `at`: a new version with `deletedTime`. */
  remove(index: number, at: number): void {
    const current = this.live(index, at);
    this.changed.set(index, { ...current, version: current.version + 1, lastUpdatedTime: at, deletedTime: at });
  }

  /** A new instance at the end of the kind, created at `at`; its index. */
  insert(at: number): number {
    const index = this.count;
    this.inserted++;
    this.changed.set(index, { revision: 0, version: 1, createdTime: at, lastUpdatedTime: at });
    return index;
  }

  /** The state of an instance that may change at `at`: not deleted, and not changed after `at`. */
  private live(index: number, at: number): Changed {
    const current = this.state(index);
    const name = externalIdAt(PREFIXES[this.generator.kind], index);
    if (current.deletedTime !== undefined) throw new RangeError(`${name} was deleted at ${current.deletedTime}`);
    if (!Number.isInteger(at) || at < current.lastUpdatedTime) {
      throw new RangeError(`${name}: lastUpdatedTime ${at} is before the current ${current.lastUpdatedTime}`);
    }
    return current;
  }
}

/**
 * The instances the simulator serves: assets, activities and time series as nodes of the core
 * views, edges from assets to activities; generated from the seed, so a million nodes cost no
 * memory. Updates, inserts and deletes (the `sim` API, `--churn`) are stored and logged in order
 * for the sync feed.
 */
export class InstanceStore {
  readonly sets: Readonly<Record<InstanceKind, KindSet>>;
  readonly log = new ChangeLog();
  /** Edges join assets to activities generated at start: without both, there are none. */
  private readonly edgesPossible: boolean;

  constructor(seed: number, counts: InstanceCounts) {
    const nodeCounts = { asset: counts.assets, activity: counts.activities, timeseries: counts.timeseries };
    const generators = createGenerators(mix32(seed ^ 0x1d5a), new NodeLinks(mix32(seed ^ 0x1d5a), nodeCounts));
    this.edgesPossible = counts.assets > 0 && counts.activities > 0;
    const edges = this.edgesPossible ? counts.edges : 0;
    this.sets = {
      asset: new KindSet(generators.asset, counts.assets),
      activity: new KindSet(generators.activity, counts.activities),
      timeseries: new KindSet(generators.timeseries, counts.timeseries),
      edge: new KindSet(generators.edge, edges),
    };
  }

  /**
   * The CogniteTimeSeries nodes generated at start, each a time series of the timeseries
   * collection: node CTS-i is series i (its `instanceId`), when the collection has an i-th.
   * Nodes inserted later are not series (the platform would create one; the simulator's
   * collection is generated from the seed).
   */
  seriesNodes(): { refOf(index: number): NodeRef | undefined; indexOf(ref: NodeRef): number | undefined } {
    const { count, generator } = this.sets.timeseries;
    return {
      refOf: (index) => {
        if (index >= count) return undefined;
        return { space: generator.spaceOf(index), externalId: externalIdAt(PREFIXES.timeseries, index) };
      },
      indexOf: (ref) => {
        const found = this.find({ instanceType: 'node', ...ref });
        return found?.kind === 'timeseries' && found.index < count ? found.index : undefined;
      },
    };
  }

  /** The containers every instance of `kind` has data in (`space:externalId`). */
  containersOf(kind: InstanceKind): readonly string[] {
    return this.sets[kind].generator.containers;
  }

  count(kind: InstanceKind): number {
    return this.sets[kind].count;
  }

  /** The instance at `index` of `kind` (deleted or not). */
  instance(kind: InstanceKind, index: number): Instance {
    return this.sets[kind].instance(index);
  }

  isDeleted(kind: InstanceKind, index: number): boolean {
    return this.sets[kind].isDeleted(index);
  }

  /** Where an instance is, by its key; undefined when there is no such instance. */
  find(ref: InstanceRef): { kind: InstanceKind; index: number } | undefined {
    for (const kind of KINDS) {
      if ((kind === 'edge') !== (ref.instanceType === 'edge')) continue;
      const index = indexOfExternalId(PREFIXES[kind], ref.externalId);
      if (index !== undefined && index < this.count(kind) && this.sets[kind].generator.spaceOf(index) === ref.space) {
        return { kind, index };
      }
    }
    return undefined;
  }

  update(refs: Iterable<InstanceRef>, at: number): void {
    for (const ref of refs) this.change(ref, (set, index) => set.update(index, at));
  }

  delete(refs: Iterable<InstanceRef>, at: number): void {
    for (const ref of refs) this.change(ref, (set, index) => set.remove(index, at));
  }

  /** `count` new instances of `kind`, created at `at`; their keys. */
  insert(kind: InstanceKind, count: number, at: number): InstanceRef[] {
    if (kind === 'edge' && !this.edgesPossible) {
      throw new RangeError('edges join assets to activities generated at start: there are no assets or no activities');
    }
    const refs: InstanceRef[] = [];
    for (let n = 0; n < count; n++) {
      const index = this.sets[kind].insert(at);
      this.log.record(positionOf(kind, index));
      const { instanceType, space, externalId } = this.instance(kind, index);
      refs.push({ instanceType, space, externalId });
    }
    return refs;
  }

  private change(ref: InstanceRef, apply: (set: KindSet, index: number) => void): void {
    const found = this.find(ref);
    if (found === undefined) throw new RangeError(`no ${ref.instanceType} ${ref.space}:${ref.externalId}`);
    apply(this.sets[found.kind], found.index);
    this.log.record(positionOf(found.kind, found.index));
  }
}
