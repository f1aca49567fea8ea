import type { OutputStore } from '../../output/index.js';
import type { CommittedShard } from '../../sink/index.js';
import type { PartitionPlan } from './partition-plan.js';
import type { ManifestFile } from '../state/index.js';

/** A shard's writer of any stream, with the key its file is published under. */
export interface KeyedWriter {
  readonly key: string;
  commit(): Promise<CommittedShard>;
}

/**
 * Commits shard `seq` of a partition, one file per format (fsynced and renamed), publishes each
 * (a bucket: uploaded), and returns the manifest's entries for them.
 */
export async function commitShard(
  store: Pick<OutputStore, 'publish'>,
  plan: PartitionPlan,
  seq: number,
  writers: readonly KeyedWriter[],
): Promise<ManifestFile[]> {
  const committed = await Promise.all(writers.map(async (writer) => ({ key: writer.key, ...(await writer.commit()) })));
  for (const shard of committed) await store.publish(shard.key);
  return committed.map((shard) => ({
    path: shard.key,
    stream: plan.stream.name,
    ...(plan.run === null ? {} : { run: plan.run }),
    m: plan.m,
    n: plan.n,
    seq,
    format: shard.format,
    rows: shard.rows,
    bytes: shard.bytes,
    sha256: shard.sha256,
    ...(shard.deltaStats === undefined ? {} : { deltaStats: shard.deltaStats }),
  }));
}
