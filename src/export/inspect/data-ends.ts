import { silentLogger } from '../../log.js';
import { isComplete, LATEST_FILE, type Output, parseCheckpoint, RUN_PREFIX, type StreamState } from '../state/index.js';
import { readWorkersProgress } from '../workers/index.js';

const RUN_ID = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d\.\d{3})Z$/;

/**
 * How fresh a scheduled stream's data is: the end of its last completed window, epoch ms.
 * Incremental: the `until` of the window when the current one is complete, else the watermark (the
 * `until` of the one before; for an instances stream, whose windows end at their run's start, the
 * start of the last completed run). Snapshot: the start of the last sealed snapshot, `_LATEST`'s
 * run (`latest`, as that file holds it). Undefined for a full stream, and while none completed.
 */
export function dataEndOf(state: StreamState, latest: string | undefined): number | undefined {
  if (state.mode === 'incremental') {
    if (state.window !== null && isComplete(state)) return state.window.until;
    return state.watermark ?? undefined;
  }
  if (state.mode !== 'snapshot' || latest === undefined) return undefined;
  const match = RUN_ID.exec(latest.trim().replace(RUN_PREFIX, ''));
  if (match === null) return undefined;
  const [, year, month, day, hour, minute, second] = match;
  const start = Date.parse(`${year}-${month}-${day}T${hour}:${minute}:${second}Z`);
  return Number.isNaN(start) ? undefined : start;
}

/**
 * The data end (dataEndOf) of each incremental and snapshot stream of the output, from its
 * checkpoint (during a split job: its workers' merged), and each snapshot stream's `_LATEST`.
 * Read without a lock; empty when the output holds no checkpoint yet. Throws what the store throws,
 * and a CheckpointError for a checkpoint that cannot be read.
 */
export async function readDataEnds(output: Output, now = Date.now()): Promise<Map<string, number>> {
  const { store, checkpointKey } = output;
  const ends = new Map<string, number>();
  const text = await store.getText(checkpointKey);
  if (text === undefined) return ends;
  const split = await readWorkersProgress(store, silentLogger, new Date(now).toISOString());
  const checkpoint = split?.checkpoint ?? parseCheckpoint(text, store.where(checkpointKey));
  for (const [name, state] of Object.entries(checkpoint.streams)) {
    const latest = state.mode === 'snapshot' ? await store.getText(`${name}/${LATEST_FILE}`) : undefined;
    const end = dataEndOf(state, latest);
    if (end !== undefined) ends.set(name, end);
  }
  return ends;
}
