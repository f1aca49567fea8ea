/**
 * A datapoints stream's `timeZone` against the platform's rule for aggregates: it computes
 * buckets only where the zone's UTC offset is a whole multiple of 15 minutes, and refuses a query
 * (400) whose window starts or ends where it is not. Many IANA zones kept their local mean time,
 * an offset to the second, into the 20th century (Asia/Kolkata +05:21:10 until 1906,
 * Africa/Monrovia -00:43:08 and -00:44:30 until 1972), so a window from the default start, 1900,
 * fails mid-run: this finds it when the job file is read, with the first start the platform takes.
 * The zones' histories are those of the IANA database Node.js ships (older ones differ: Europe/
 * Amsterdam's +00:19:32 until 1937 is now Brussels' history, +00:00 in 1900).
 */

const QUARTER_HOUR_MS = 15 * 60_000;
const FIXED = /^UTC([+-])(\d{2}):(\d{2})$/;
/** The step of the search for the zone's last odd offset: shorter than any era of an offset. */
const STEP_MS = 30 * 86_400_000;
const DAY_MS = 86_400_000;

/** A zone's UTC offset in ms at an instant (local = utc + offset), Intl's (Node.js ships the IANA database). */
export type OffsetAt = (utcMs: number) => number;

/** The offsets of `zone` (an IANA name or `UTC±HH:MM`, checked already); undefined when Intl knows no such zone. */
export function zoneOffsets(zone: string): OffsetAt | undefined {
  const fixed = FIXED.exec(zone);
  if (fixed !== null) {
    const offset = (Number(fixed[2]) * 60 + Number(fixed[3])) * 60_000 * (fixed[1] === '-' ? -1 : 1);
    return () => offset;
  }
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch {
    return undefined;
  }
  return (utcMs) => {
    const field: Record<string, number> = {};
    for (const part of format.formatToParts(utcMs)) field[part.type] = Number(part.value);
    const { year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = field;
    // Years before 100 would be read as 19xx by Date.UTC: setUTCFullYear keeps them.
    const wall = new Date(Date.UTC(2000, month - 1, day, hour, minute, second)).setUTCFullYear(year);
    const whole = utcMs - (((utcMs % 1000) + 1000) % 1000);
    return wall - whole;
  };
}

/** `+00:19:32`, `-05:00`: an offset as the platform's messages and the zone databases write it. */
export function offsetText(offsetMs: number): string {
  const sign = offsetMs < 0 ? '-' : '+';
  const seconds = Math.round(Math.abs(offsetMs) / 1000);
  const hh = String(Math.floor(seconds / 3600)).padStart(2, '0');
  const mm = String(Math.floor((seconds % 3600) / 60)).padStart(2, '0');
  const ss = seconds % 60;
  return `${sign}${hh}:${mm}${ss === 0 ? '' : `:${String(ss).padStart(2, '0')}`}`;
}

function isQuarterHour(offsetMs: number): boolean {
  return offsetMs % QUARTER_HOUR_MS === 0;
}

/** Where a window's end (or start) lies at an offset the platform refuses. */
export interface OddOffset {
  /** The instant checked: the window's start, or its last millisecond. */
  at: number;
  offsetMs: number;
  /**
   * The first UTC midnight from which the zone's offset stays whole quarter hours up to `until`
   * (the start the platform takes); undefined for a fixed offset, which never does.
   */
  laterStart: number | undefined;
}

/**
 * The first end of the window [start, end) at which the zone's offset is not whole quarter hours
 * (the ends the platform checks); undefined when both are fine. `end` undefined: the run's start,
 * not known here, which lies today, where every zone's offset is whole quarter hours.
 */
export function oddOffset(zone: string, start: number, end: number | undefined, until: number): OddOffset | undefined {
  const offsetAt = zoneOffsets(zone);
  if (offsetAt === undefined) return undefined;
  const at = [start, ...(end === undefined ? [] : [end - 1])].find((time) => !isQuarterHour(offsetAt(time)));
  if (at === undefined) return undefined;
  const laterStart = FIXED.test(zone) ? undefined : firstQuarterHourStart(offsetAt, at, until);
  return { at, offsetMs: offsetAt(at), laterStart };
}

/**
 * The first UTC midnight after `from` from which the offset stays whole quarter hours up to
 * `until`: the last odd instant found a step at a time, then the change after it to the ms.
 */
function firstQuarterHourStart(offsetAt: OffsetAt, from: number, until: number): number | undefined {
  let lastOdd = from;
  for (let time = from; time < until; time += STEP_MS) if (!isQuarterHour(offsetAt(time))) lastOdd = time;
  let low = lastOdd;
  let high = Math.min(until, lastOdd + STEP_MS);
  if (!isQuarterHour(offsetAt(high))) return undefined;
  while (high - low > 1000) {
    const middle = Math.floor((low + high) / 2);
    if (isQuarterHour(offsetAt(middle))) high = middle;
    else low = middle;
  }
  return Math.ceil(high / DAY_MS) * DAY_MS;
}
