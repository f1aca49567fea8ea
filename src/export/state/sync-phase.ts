import type { StreamState } from './checkpoint-schema.js';

/**
 * What a run of an incremental instances stream reads from the platform's sync feed: the first
 * run a backfill (every instance, then the changes made meanwhile), each later run the changes
 * since the cursors the run before it ended with. Undefined for any other stream.
 */
export function syncPhase(state: Pick<StreamState, 'resource' | 'mode' | 'watermark'>): 'backfill' | 'changes' | undefined {
  if (state.resource !== 'instances' || state.mode !== 'incremental') return undefined;
  return state.watermark === null ? 'backfill' : 'changes';
}

/** `{sync: phase}` for a record of an incremental instances stream's run (manifests), else nothing. */
export function syncField(state: Pick<StreamState, 'resource' | 'mode' | 'watermark'>): { sync?: 'backfill' | 'changes' } {
  const phase = syncPhase(state);
  return phase === undefined ? {} : { sync: phase };
}
