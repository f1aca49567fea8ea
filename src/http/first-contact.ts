/**
 * Failing fast on an origin that was never reached. Until an origin has answered once (any HTTP
 * response), failing to reach it at all most likely means a wrong URL or a server that is not up:
 * retrying for minutes only hides that. Such failures are retried within a short budget from the
 * origin's first attempt (enough for a server or DNS entry that is a moment late), then reported
 * naming the URL and the setting to check. Once the origin has answered, the usual retry policy
 * applies: the same failure is then an outage, worth riding out.
 */

/** Failures to reach an origin at all, what they mean and what that suggests. */
export const UNREACHABLE: Readonly<Record<string, { what: string; hint: string }>> = {
  ECONNREFUSED: { what: 'connection refused', hint: 'nothing listens there' },
  ENOTFOUND: { what: 'host not found', hint: 'the name does not resolve' },
  EAI_AGAIN: { what: 'host name lookup failed', hint: 'DNS did not answer in time' },
  EHOSTUNREACH: { what: 'host unreachable', hint: 'no route to it' },
  ENETUNREACH: { what: 'network unreachable', hint: 'no route to it' },
};

/**
 * How long an origin that has never answered may keep failing to be reached, from its first
 * attempt, before the failure is final: 2,500 ms. With the last attempt, a CLI command fails in
 * under 5 s, its own start-up included.
 */
export const FIRST_CONTACT_BUDGET_MS = 2_500;

/** What an origin's transport knows about reaching it so far. */
export interface ContactState {
  /** Some attempt got an HTTP response (of any status) from the origin. */
  answered: boolean;
  /** When the first attempt to the origin started, epoch ms. */
  firstAttemptAtMs: number;
}

/**
 * `firstContact: false`: the usual retry policy applies. `firstContact: true`: retry only while the
 * next attempt starts within `retryWithinMs` (0: do not retry).
 */
export type ContactDecision = { firstContact: false } | { firstContact: true; retryWithinMs: number };

/** Whether a failure with this error `code` falls under the first-contact budget, and how much is left. */
export function decideFirstContact(
  code: string | undefined,
  state: ContactState,
  nowMs: number,
  budgetMs = FIRST_CONTACT_BUDGET_MS,
): ContactDecision {
  if (state.answered || code === undefined || !Object.hasOwn(UNREACHABLE, code)) return { firstContact: false };
  return { firstContact: true, retryWithinMs: Math.max(0, state.firstAttemptAtMs + budgetMs - nowMs) };
}
