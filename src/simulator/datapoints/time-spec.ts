import { shown } from '../filter-object.js';

/**
 * A time of a datapoints query (`start`, `end`): epoch milliseconds, negative before 1970, or
 * `N[w|d|h|m|s]-ago` counted back from now. The platform also takes `now`, so the simulator does;
 * other forms of the platform (`-ahead`, calendar units) are not served.
 */
export type TimeGiven = number | string;

/** The platform keeps timestamps from 1900-01-01 up to, not including, 2100-01-01. */
export const MIN_TIME_MS = Date.UTC(1900, 0, 1);
export const MAX_TIME_MS = Date.UTC(2100, 0, 1);

const AGO = /^([0-9]{1,15})(w|d|h|m|s)-ago$/;
const UNIT_MS: Record<string, number> = { w: 604_800_000, d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };

export type TimeParse = { ok: true; value: number } | { ok: false; message: string };

/** `given` resolved against `nowMs`, or a message naming `field`. */
export function resolveTime(given: unknown, field: string, nowMs: number): TimeParse {
  const expected = "expected epoch milliseconds (an integer), 'now' or 'N[w|d|h|m|s]-ago'";
  let ms: number | undefined;
  if (typeof given === 'number' && Number.isSafeInteger(given)) ms = given;
  else if (given === 'now') ms = nowMs;
  else if (typeof given === 'string') {
    const match = AGO.exec(given);
    if (match !== null) ms = nowMs - Number(match[1]) * (UNIT_MS[match[2] ?? ''] ?? 0);
  }
  if (ms === undefined) return { ok: false, message: `Invalid property '${field}': ${expected}, got ${shown(given)}.` };
  if (ms < MIN_TIME_MS || ms > MAX_TIME_MS) {
    return {
      ok: false,
      message: `Invalid property '${field}': ${ms} is outside the platform's time range ${MIN_TIME_MS}..${MAX_TIME_MS} (1900 to 2100).`,
    };
  }
  return { ok: true, value: ms };
}
