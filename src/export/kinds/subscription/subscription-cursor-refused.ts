import { SyncCursorError } from '../../../errors.js';
import type { HttpStatusError } from '../../../http/errors.js';
import type { PartitionPlan } from '../../partition/index.js';
import type { StreamState, SubscriptionStreamPlan } from '../../state/index.js';

/**
 * The platform refused a cursor a subscription stream saved after its first run: the subscription
 * no longer holds the changes since then (it keeps 7 days), so a run from there would miss some.
 * The error names the stream, the partition and when the cursor was saved, and the way on.
 */
export function subscriptionCursorRefused(
  cause: HttpStatusError,
  plan: PartitionPlan<SubscriptionStreamPlan>,
  state: StreamState,
): SyncCursorError {
  const { name, subscription } = plan.stream;
  const savedAt = state.parts[String(plan.m)]?.updatedAt;
  const saved = savedAt === undefined ? '' : ` (saved ${savedAt})`;
  const reason = cause.platformMessage ?? cause.message;
  return new SyncCursorError(
    `streams (${name}), partition ${plan.m}/${plan.n}: the platform refused the cursor of subscription '${subscription.externalId}' ` +
    `this stream saved${saved}: ${reason}\n` +
    'A subscription keeps 7 days of changes, so some of the changes since the last run are gone from its feed. ' +
    'What is committed stays as it is. To go on without a gap:\n' +
    '  1. export the window you keep again with a plain datapoints stream (no subscription), and replace your points with it;\n' +
    `  2. run with --fresh --stream ${name}: this stream starts again from the subscription's start (or initializeCursors), ` +
    'and its changes apply on top of that export.',
    { cause },
  );
}
