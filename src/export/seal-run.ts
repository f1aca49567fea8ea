import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Resource } from '../config/job-schema.js';
import { type Mirror, writeOutputText } from './mirror.js';
import { VERSION } from '../version.js';
import { isComplete, sentBounds, type StreamState } from './checkpoint.js';
import { MANIFEST_FILE, runDir, SUCCESS_FILE } from './layout.js';
import type { ManifestFile } from './manifest.js';

/**
 * `<stream>/run=<run>/_manifest.json`: what one completed incremental run wrote. The output
 * folder's `_manifest.json` lists the current runs only, so each run folder describes itself.
 */
export interface RunManifest {
  version: 1;
  tool: string;
  baseUrl: string;
  stream: string;
  resource: Resource;
  run: string;
  /** The lastUpdatedTime range read, both ends inclusive as sent (min null: from the beginning). */
  window: { minLastUpdatedTime: number | null; maxLastUpdatedTime: number };
  rows: number;
  /** Paths relative to the output folder, as in the output folder's manifest. */
  files: ManifestFile[];
}

/**
 * Writes a completed incremental run's manifest, then its `_SUCCESS`. Idempotent: the run that
 * completes the window calls it, and so does the next one before it opens a new window, in case
 * the first stopped in between.
 */
export async function sealRun(
  outDir: string,
  baseUrl: string,
  stream: string,
  state: StreamState,
  files: readonly ManifestFile[],
  mirror?: Mirror,
): Promise<void> {
  if (state.run === null || state.window === null || !isComplete(state)) return;
  const run = state.run;
  const mine = files.filter((file) => file.stream === stream && file.run === run);
  const manifest: RunManifest = {
    version: 1,
    tool: `bulk-extract/${VERSION}`,
    baseUrl,
    stream,
    resource: state.resource,
    run,
    window: sentBounds(state.window),
    rows: Object.values(state.parts).reduce((sum, part) => sum + part.rows, 0),
    files: mine,
  };
  const dir = join(outDir, runDir(stream, run));
  await mkdir(dir, { recursive: true });
  await writeOutputText(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, mirror);
  await writeOutputText(join(dir, SUCCESS_FILE), '', mirror);
}
