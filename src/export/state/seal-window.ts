import type { Logger } from '../../log.js';
import type { OutputStore } from '../../output/index.js';
import { VERSION } from '../../version.js';
import { isComplete, type StreamState } from './checkpoint.js';
import { pointWindowOf, sentWindow, syncField } from './stream-records.js';
import { removeOwnedTree } from './clean-up.js';
import { LATEST_FILE, MANIFEST_FILE, RUN_PREFIX, windowDir, SUCCESS_FILE } from './layout.js';
import type { ManifestFile, WindowManifest } from './manifest.js';

/** Where sealed windows and snapshots are written. */
export interface SealTarget {
  store: OutputStore;
  baseUrl: string;
  logger: Logger;
}

export interface WindowToSeal {
  stream: string;
  state: StreamState;
  /** Files of the output (any window); this window's own are picked out. */
  files: readonly ManifestFile[];
  /** snapshot: completed snapshots to keep; undefined keeps all. */
  keep: number | undefined;
}

/**
 * Seals a completed window or snapshot (the `run=<id>` folder of a scheduled stream, or of a Delta
 * table's full export): its manifest, its version of the Delta table (delta-table.ts), then its
 * `_SUCCESS`. A snapshot then becomes the stream's `_LATEST`, and only after that are snapshots
 * beyond `keep` deleted, oldest first. Idempotent: the run that completes the window
 * calls it, and so does the next run before it opens a new window, in case the first stopped in between.
 */
export async function sealWindow(target: SealTarget, { stream, state, files, keep }: WindowToSeal): Promise<void> {
  if (state.run === null || state.window === null || !isComplete(state)) return;
  const { store, baseUrl } = target;
  const run = state.run;
  // Datapoints record their point times instead of a lastUpdatedTime window; instances neither.
  const pointWindow = pointWindowOf(state);
  const manifest: WindowManifest = {
    version: 1,
    tool: `bulk-extract/${VERSION}`,
    baseUrl,
    stream,
    resource: state.resource,
    run,
    window: sentWindow(state),
    ...(pointWindow === undefined ? {} : { pointWindow }),
    ...syncField(state),
    rows: Object.values(state.parts).reduce((sum, part) => sum + part.rows, 0),
    files: files.filter((file) => file.stream === stream && file.run === run),
  };
  const dir = windowDir(stream, run);
  await store.putText(`${dir}/${MANIFEST_FILE}`, `${JSON.stringify(manifest, null, 2)}\n`);
  if (state.table === 'delta') {
    // The version readers see; loaded here only, as it brings the Parquet and Arrow code along.
    const { commitTableRun } = await import('./delta-table.js');
    await commitTableRun(target, { stream, state, files, keep });
  }
  await store.putText(`${dir}/${SUCCESS_FILE}`, '');
  if (state.mode !== 'snapshot') return;
  await store.putText(`${stream}/${LATEST_FILE}`, `${RUN_PREFIX}${run}\n`);
  // A Delta table's old snapshots went with the commit, by the versions that reference them.
  if (keep !== undefined && state.table !== 'delta') await pruneSnapshots(target, stream, keep);
}

/** Deletes the sealed snapshots of a stream beyond the newest `keep`; unsealed folders stay. */
async function pruneSnapshots(target: SealTarget, stream: string, keep: number): Promise<void> {
  const { store, logger } = target;
  const sealed = (await sealedWindows(store, stream)).sort();
  for (const name of sealed.slice(0, Math.max(0, sealed.length - keep))) {
    logger.info({ stream, run: name, keep }, `deleting snapshot ${stream}/${name}: keep is ${keep}`);
    // Its _SUCCESS first: a reader never sees a sealed snapshot with files missing.
    await store.remove([`${stream}/${name}/${SUCCESS_FILE}`]);
    await removeOwnedTree(store, `${stream}/${name}`, logger);
  }
}

/** The sealed windows or snapshots of a stream: its `run=<id>` folders that hold a `_SUCCESS`. */
export async function sealedWindows(store: OutputStore, stream: string): Promise<string[]> {
  return (await store.list(`${stream}/${RUN_PREFIX}`)).flatMap((key) => {
    const [, name, file, ...deeper] = key.split('/');
    return name !== undefined && file === SUCCESS_FILE && deeper.length === 0 ? [name] : [];
  });
}
