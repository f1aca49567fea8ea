import { hash3, type Rng } from '../random.js';
import { externalIdAt, type NodeRef, siteOf } from './instance-values.js';

/** The four kinds of generated instances: three of nodes (one per core view), one of edges. */
export type InstanceKind = 'asset' | 'activity' | 'timeseries' | 'edge';
export const KINDS: readonly InstanceKind[] = ['asset', 'activity', 'timeseries', 'edge'];
export type NodeKind = Exclude<InstanceKind, 'edge'>;
export const NODE_KINDS: readonly NodeKind[] = ['asset', 'activity', 'timeseries'];

/** The externalId prefix of each kind: `AST-00000A` is asset 10. */
export const PREFIXES: Readonly<Record<InstanceKind, string>> = {
  asset: 'AST',
  activity: 'ACT',
  timeseries: 'CTS',
  edge: 'EDG',
};

/** Assets per tree: the first of each block of consecutive indexes is a root. */
export const ASSET_TREE_SIZE = 50;

const SPACE_SALTS: Readonly<Record<NodeKind, number>> = { asset: 0xa55e, activity: 0xac71, timeseries: 0x75e7 };
const PARENT_SALT = 0x9a7e;

/**
 * Where each generated node lies and how nodes point at each other: the space of any node, the
 * parent of an asset, nodes drawn at random as targets of direct relations and edges. Targets are
 * drawn among the nodes generated at start (`counts`), so that every relation is a pure function of
 * the seed; a node deleted since may be pointed at, as on the platform.
 */
export class NodeLinks {
  constructor(
    private readonly seed: number,
    readonly counts: Readonly<Record<NodeKind, number>>,
  ) {}

  /** An asset lies in the space of its tree's root; other nodes in a space of their own drawing. */
  spaceOf(kind: NodeKind, index: number): string {
    const at = kind === 'asset' ? this.rootIndexOf(index) : index;
    return siteOf(this.seed, SPACE_SALTS[kind], at);
  }

  ref(kind: NodeKind, index: number): NodeRef {
    return { space: this.spaceOf(kind, index), externalId: externalIdAt(PREFIXES[kind], index) };
  }

  rootIndexOf(index: number): number {
    return index - (index % ASSET_TREE_SIZE);
  }

  /** An earlier asset of the same tree; undefined for a root. */
  parentIndexOf(index: number): number | undefined {
    const root = this.rootIndexOf(index);
    return index === root ? undefined : root + (hash3(this.seed, index, PARENT_SALT) % (index - root));
  }

  /** The asset's ancestors from its root down, then itself. */
  pathOf(index: number): NodeRef[] {
    const path: NodeRef[] = [];
    for (let at: number | undefined = index; at !== undefined; at = this.parentIndexOf(at)) path.push(this.ref('asset', at));
    return path.reverse();
  }

  /** A node of `kind` drawn at random; undefined when there are none. */
  pick(rng: Rng, kind: NodeKind): NodeRef | undefined {
    const count = this.counts[kind];
    return count === 0 ? undefined : this.ref(kind, rng.int(count));
  }

  /** Up to `most` distinct nodes of `kind`, drawn at random. */
  some(rng: Rng, kind: NodeKind, most: number): NodeRef[] {
    const wanted = rng.int(most + 1);
    const refs: NodeRef[] = [];
    for (let attempt = 0; refs.length < wanted && attempt < 2 * most; attempt++) {
      const ref = this.pick(rng, kind);
      if (ref !== undefined && !refs.some((seen) => seen.externalId === ref.externalId)) refs.push(ref);
    }
    return refs;
  }
}
