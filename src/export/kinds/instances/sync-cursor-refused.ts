import { SyncCursorError } from '../../../errors.js';
import type { HttpStatusError } from '../../../http/errors.js';
import type { PartitionPlan } from '../../partition/index.js';
import type { StreamState } from '../../state/index.js';

/**
 * The platform refused the sync cursor of an incremental instances stream's query after its
 * backfill: the changes since then, deletes among them, cannot all be read any more. The error
 * names the stream, the query and when the cursor was saved, and the two ways on.
 */
export function syncCursorRefused(cause: HttpStatusError, plan: PartitionPlan, state: StreamState): SyncCursorError {
  const name = plan.stream.name;
  const savedAt = state.parts[String(plan.m)]?.updatedAt;
  const saved = savedAt === undefined ? '' : ` (saved ${savedAt})`;
  const reason = cause.platformMessage ?? cause.message;
  return new SyncCursorError(
    `streams (${name}), query ${plan.m}/${plan.n}: the platform refused the sync cursor this stream saved${saved}: ${reason}\n` +
    'Sync cursors expire after 3 days, when the platform purges deleted instances, so the deletes since then may be gone ' +
    'from the feed. What is committed stays as it is. Choose one:\n' +
    `  - a new backfill: run with --fresh --stream ${name} (deletes this stream's earlier output and exports the view again);\n` +
    `  - go on and accept missed deletes: set allowExpiredCursorsAndAcceptMissedDeletes: true on stream ${name} ` +
    '(rows deleted since the cursor was saved may stay in your tables).',
    { cause },
  );
}
