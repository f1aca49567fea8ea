import { countInFlight, isStatusFault, sendStatusFault } from '../fault-response.js';
import type { ListContext } from '../list-handler.js';
import { type Exchange, sendText } from '../respond.js';
import { increment } from '../stats.js';
import type { Churn } from './churn.js';
import type { InstanceStore } from './instance-store.js';

/** What the `/models/...` handlers share: the lists' context, the instances and their churn. */
export interface ModelsContext extends ListContext {
  instances: InstanceStore;
  churn: Churn;
}

/** The fault plan's key: the request's binding, its position, and the limit a short page shortens. */
export interface PlanKey {
  binding: string;
  position: number;
  limit: number;
  /**
   * False where a short page would change the answer's meaning (the sync feed's: a reader knows
   * it has caught up from a short page): a short-page fault then passes it by. Default true.
   */
  shortPages?: boolean;
}

/**
 * Serves an answer as the collections' lists are served: counted in flight, the drawn latency
 * slept on the clock, a status fault answered instead, a body fault applied to the JSON, a short
 * page passed to `answer` as a smaller limit; pages and items counted when nothing was faulted.
 * The caller has refused what it refuses (400s, the caps' 429) before.
 */
export async function serveFaulted(
  ctx: ModelsContext,
  ex: Exchange,
  key: PlanKey,
  answer: (limit: number) => { body: unknown; items: number },
): Promise<void> {
  countInFlight(ex, () => ctx.stats);
  const plan = ctx.planner.plan(key.binding, key.position, key.limit);
  if (plan.delayMs > 0) await ctx.clock.sleep(plan.delayMs);
  if (plan.fault !== undefined) increment(ctx.stats.faults, plan.fault);
  if (isStatusFault(plan.fault)) return sendStatusFault(ex, plan.fault, ctx.config.faults);
  const shortLimit = key.shortPages === false ? undefined : plan.shortLimit;
  if (shortLimit !== undefined) increment(ctx.stats.faults, 'short-page');
  const { body, items } = answer(shortLimit ?? key.limit);
  if (plan.fault === undefined) {
    ctx.stats.pages++;
    ctx.stats.items += items;
  }
  return sendText(ex, 200, JSON.stringify(body), 'application/json; charset=utf-8', {}, plan.fault);
}
