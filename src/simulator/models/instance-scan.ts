import { type Instance, type InstanceStore, kindAt, positionOf } from './instance-store.js';
import { type InstanceKind, KINDS } from './node-links.js';

/** One page of a scan: what was taken, and the position to go on from (undefined: nothing is left). */
export interface ScanPage {
  instances: Instance[];
  next: number | undefined;
}

/**
 * Walks the instances of `kinds` in the simulator's stable order (kind by kind, index by index)
 * from `from`, taking what `take` returns, until `limit` are taken, `budget` positions are examined
 * (the page then ends early, as the platform's do) or the kinds end. Instances inserted while a
 * chain runs land at the end of their kind, so a chain that has not passed it sees them.
 */
export function scan(
  store: InstanceStore,
  kinds: readonly InstanceKind[],
  from: number,
  limit: number,
  budget: number,
  take: (kind: InstanceKind, index: number) => Instance | undefined,
): ScanPage {
  const instances: Instance[] = [];
  const start = kindAt(from);
  let examined = 0;
  for (const kind of KINDS) {
    if (KINDS.indexOf(kind) < KINDS.indexOf(start.kind) || !kinds.includes(kind)) continue;
    for (let index = kind === start.kind ? start.index : 0; index < store.count(kind); index++) {
      if (instances.length >= limit || examined >= budget) return { instances, next: positionOf(kind, index) };
      examined++;
      const instance = take(kind, index);
      if (instance !== undefined) instances.push(instance);
    }
  }
  return { instances, next: undefined };
}
