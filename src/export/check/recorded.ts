import { CheckpointError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { OutputStore } from '../../output/index.js';
import { type Checkpoint, type Manifest, MANIFEST_FILE, newManifest, readManifestFile, type StreamPlan } from '../state/index.js';
import { countedShards, type SizeProblem, sizeProblem } from './find-damage.js';
import { checkpointProblems, type PartProblem } from './record-problems.js';

/**
 * What an output has recorded, read for a run to go on from: its manifest, whether the shards its
 * checkpoint counts are there, and whether its checkpoint and manifest agree. Each refusal is a
 * CheckpointError that names the files and what to do.
 */

/**
 * The folder's `_manifest.json` as it was written. A damaged one is replaced by an empty list, with
 * a warning: the shards the checkpoint counts are then not listed, and the run refuses to resume.
 */
export async function readManifest(store: OutputStore, baseUrl: string, logger: Logger): Promise<Manifest> {
  const manifest = await readManifestFile(store, MANIFEST_FILE, (damaged) => {
    logger.warn({ output: store.location }, `${damaged.message} Its file list starts empty.`);
  });
  return manifest ?? newManifest(baseUrl, new Date(0).toISOString());
}

/** A manifest as a new run starts it: running since `now`. */
export function restarted(manifest: Manifest, now: string): Manifest {
  return { ...manifest, state: 'running', startedAt: now };
}

/**
 * Every shard the checkpoint counts for the planned streams must be listed in the manifest and be
 * on disk at its recorded size; otherwise the folder is not the one the checkpoint describes
 * (moved, cleaned, another output.dir), and resuming would report rows that are not there.
 */
export async function assertShardsPresent(
  store: OutputStore,
  checkpoint: Checkpoint,
  manifest: Manifest,
  streams: readonly string[],
): Promise<void> {
  const found: SizeProblem[] = [];
  for (const shard of countedShards(checkpoint, manifest, streams)) {
    const problem = await sizeProblem(store, shard);
    if (problem !== undefined) found.push(problem);
  }
  if (found.length > 0) throw notHeldError(store, found);
}

const KINDS: Record<SizeProblem['kind'], string> = {
  missing: 'missing',
  damaged: 'damaged: another size than the manifest records',
  unlisted: 'not in the manifest',
};

/** The refusal of a run whose checkpoint counts shards gone, damaged or unlisted: how many of each, the first five. */
function notHeldError(store: OutputStore, found: readonly SizeProblem[]): CheckpointError {
  const counts = (Object.keys(KINDS) as SizeProblem['kind'][])
    .map((kind) => [kind, found.filter((problem) => problem.kind === kind).length] as const)
    .filter(([, count]) => count > 0)
    .map(([kind, count]) => `${count} ${KINDS[kind]}`);
  const lines = found.slice(0, 5).map((problem) => `  - ${problem.text}`);
  if (found.length > 5) lines.push(`  - ... (${found.length} in all)`);
  const cause = found.every((problem) => problem.kind === 'damaged')
    ? 'Was a shard cut short or overwritten (a full disk, a copy that did not finish)?'
    : 'Was the folder moved or cleaned, or is output.dir not the one of the run that wrote the checkpoint?';
  return new CheckpointError(
    `${store.location} does not hold the shards the checkpoint counts as they were written (${counts.join(', ')}), so resuming would report rows that are not there:\n${lines.join('\n')}\n${cause} Nothing was changed. Run \`bulk-extract repair\` to read only the damaged partitions again, or run with --fresh to start over.`,
  );
}

/** Where the checkpoint and the manifest disagree on the planned streams' partitions. */
export function disagreements(
  checkpoint: Checkpoint,
  manifest: Manifest,
  streams: readonly StreamPlan[],
): PartProblem[] {
  const names = new Set(streams.map((s) => s.name));
  const planned = Object.entries(checkpoint.streams).filter(([name]) => names.has(name));
  return checkpointProblems({ ...checkpoint, streams: Object.fromEntries(planned) }, manifest);
}

/** The refusal of a run whose checkpoint and manifest disagree, naming both files and each partition. */
export function disagreeError(
  store: OutputStore,
  checkpointKey: string,
  problems: readonly PartProblem[],
): CheckpointError {
  const lines = problems.slice(0, 5).map((problem) => `  - ${problem.text}`);
  if (problems.length > 5) lines.push(`  - ... (${problems.length} in all)`);
  return new CheckpointError(
    `${store.where(checkpointKey)} and ${store.where(MANIFEST_FILE)} disagree, so resuming from them would lose or repeat rows:\n${lines.join('\n')}\nWere they edited or restored from different times? Nothing was changed. Run \`bulk-extract repair\` to read the partitions named here again, or run with --fresh to start over.`,
  );
}
