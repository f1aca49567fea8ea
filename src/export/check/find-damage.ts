import type { Format } from '../../config/job-schema.js';
import type { OutputStore } from '../../output/index.js';
import { type Checkpoint, type Manifest, type ManifestFile, pairKey } from '../state/index.js';
import { checkShard } from './verify-shard.js';

/** A shard the checkpoint counts: its manifest entry, or undefined when the manifest lacks it. */
export interface CountedShard {
  stream: string;
  m: number;
  n: number;
  seq: number;
  format: Format;
  file: ManifestFile | undefined;
}

/** Every shard the checkpoint counts for `streams` (seq below each partition's next), with its manifest entry. */
export function countedShards(checkpoint: Checkpoint, manifest: Manifest, streams: readonly string[]): CountedShard[] {
  const listed = new Map(manifest.files.map((f) => [`${f.stream}/${f.run ?? ''}/${f.m}/${f.seq}/${f.format}`, f]));
  const counted: CountedShard[] = [];
  for (const stream of streams) {
    const state = checkpoint.streams[stream];
    if (state === undefined) continue;
    for (const [m, part] of Object.entries(state.parts)) {
      for (let seq = 0; seq < part.nextSeq; seq++) {
        for (const format of state.formats) {
          const file = listed.get(`${stream}/${state.run ?? ''}/${m}/${seq}/${format}`);
          counted.push({ stream, m: Number(m), n: state.partitions, seq, format, file });
        }
      }
    }
  }
  return counted;
}

/** What is wrong with a counted shard judged by its size alone: it is not listed, not there, or of another size. */
export interface SizeProblem {
  kind: 'unlisted' | 'missing' | 'damaged';
  text: string;
}

/** What is wrong with a counted shard judged by its size alone (cheap: no read), or undefined. */
export async function sizeProblem(store: OutputStore, shard: CountedShard): Promise<SizeProblem | undefined> {
  const { file } = shard;
  if (file === undefined) {
    return { kind: 'unlisted', text: `${shard.stream} partition ${shard.m}/${shard.n} shard ${shard.seq} (${shard.format}): not in the manifest` };
  }
  const size = await store.size(file.path);
  if (size === undefined) return { kind: 'missing', text: `${file.path}: missing` };
  if (size === file.bytes) return undefined;
  const how = size < file.bytes ? 'truncated: ' : '';
  return { kind: 'damaged', text: `${file.path}: damaged (${how}${size} bytes, the manifest records ${file.bytes})` };
}

/**
 * The partitions (`stream/m`) of the current runs whose committed shards are not what the
 * manifest records: missing, another size, sha256 or row count (every shard is read back), or
 * counted by the checkpoint but not listed. Each with what is wrong.
 */
export async function findDamage(
  store: OutputStore,
  checkpoint: Checkpoint,
  manifest: Manifest,
  streams: readonly string[],
): Promise<Map<string, string[]>> {
  const damaged = new Map<string, string[]>();
  for (const shard of countedShards(checkpoint, manifest, streams)) {
    const problems = shard.file === undefined ? [(await sizeProblem(store, shard))?.text ?? ''] : await checkShard(store, shard.file);
    if (problems.length === 0) continue;
    const key = pairKey(shard.stream, shard.m);
    damaged.set(key, [...(damaged.get(key) ?? []), ...problems]);
  }
  return damaged;
}
