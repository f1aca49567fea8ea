import type { StreamPlan } from '../state/index.js';

/** One cursor chain to drain: a stream's partition m of n. */
export interface PartitionPlan<P extends StreamPlan = StreamPlan> {
  /** The stream's plan, whose settings (collection, formats, metadata columns) the partition has. */
  stream: P;
  m: number;
  n: number;
  /** Every request parameter of the chain but `cursor`, in the order sent; includes `partition` when n > 1. */
  params: [string, string][];
  /** incremental and snapshot: the run the chain belongs to (its folder `run=<run>`); null for a full export. */
  run: string | null;
  /** The partition's folder, relative to the output folder. */
  dir: string;
}
