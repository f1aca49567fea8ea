/**
 * The `timeZone` of an aggregate query: a zone's UTC offset at any instant, and where a local day
 * starts, with Intl (the IANA database Node.js ships) rather than a dependency: the simulator needs
 * only these two questions answered, and Intl answers them for every zone the platform names.
 *
 * The platform's rules (docs.cognite.com/dev/concepts/aggregation/calendar): an IANA name or a fixed
 * `UTC±HH:MM`; a local day starts at 00:00, the first 00:00 when a day has two (a fall-back from
 * 01:00 to 00:00); only offsets that are whole multiples of 15 minutes are supported.
 */
export interface TimeZone {
  /** As given, for messages. */
  name: string;
  /** The zone's offset from UTC at `utcMs`, in ms (local = utc + offset). */
  offsetAt(utcMs: number): number;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Offsets lie between -12:00 and +14:00; a day's start lies within this of its local midnight. */
const WIDEST_OFFSET_MS = 15 * HOUR_MS;

const FIXED = /^UTC([+-])([01][0-9]):([0-5][0-9])$/;
/** Names that are UTC itself (the simulator took these before it had zones). */
const UTC_NAMES = ['UTC', 'Z', 'Etc/UTC', 'GMT', '+00:00', '-00:00'];

/** The zone `text` names, or undefined when it names none. */
export function parseTimeZone(text: string): TimeZone | undefined {
  if (UTC_NAMES.includes(text)) return fixedZone(text, 0);
  const fixed = FIXED.exec(text);
  if (fixed !== null) {
    const minutes = Number(fixed[2]) * 60 + Number(fixed[3]);
    if (minutes > 14 * 60) return undefined;
    return fixedZone(text, (fixed[1] === '-' ? -minutes : minutes) * MINUTE_MS);
  }
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: text,
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
  return { name: text, offsetAt: (utcMs) => intlOffset(format, utcMs) };
}

function fixedZone(name: string, offsetMs: number): TimeZone {
  return { name, offsetAt: () => offsetMs };
}

/** The offset Intl gives at `utcMs`: the local wall time it formats, read back as if UTC, minus the instant. */
function intlOffset(format: Intl.DateTimeFormat, utcMs: number): number {
  const field: Record<string, number> = {};
  for (const part of format.formatToParts(utcMs)) field[part.type] = Number(part.value);
  const { year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = field;
  const wall = Date.UTC(year, month - 1, day, hour, minute, second);
  // Formatting drops the milliseconds: compare with the instant's whole second.
  return wall - (utcMs - mod(utcMs, 1000));
}

/** Whether the zone's offset at `utcMs` is a whole multiple of 15 minutes, as the platform requires. */
export function isQuarterHourOffset(zone: TimeZone, utcMs: number): boolean {
  return zone.offsetAt(utcMs) % (15 * MINUTE_MS) === 0;
}

/** The local day number (days since 1970-01-01 in local time) of the instant `utcMs`. */
export function localDayOf(zone: TimeZone, utcMs: number): number {
  return Math.floor((utcMs + zone.offsetAt(utcMs)) / DAY_MS);
}

/**
 * The first instant of local day `day` (days since 1970-01-01, local): its 00:00, the earlier one
 * when 00:00 comes twice; when 00:00 does not exist (a spring-forward at midnight), the instant the
 * clocks jump, the day's first.
 */
export function startOfLocalDay(zone: TimeZone, day: number): number {
  const local = day * DAY_MS;
  const before = zone.offsetAt(local - DAY_MS);
  const after = zone.offsetAt(local + DAY_MS);
  const found = [local - before, local - after].filter((utc) => utc + zone.offsetAt(utc) === local);
  if (found.length > 0) return Math.min(...found);
  // In a gap: the jump lies in (local - after, local - before]; its instant is the first whose offset is `after`.
  let low = local - Math.max(before, after) - WIDEST_OFFSET_MS;
  let high = local - Math.min(before, after);
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (middle + zone.offsetAt(middle) >= local) high = middle;
    else low = middle;
  }
  return high;
}

/** `utcMs` rounded down to a whole hour of local time (a half-hour zone's hours start at :30 UTC). */
export function startOfLocalHour(zone: TimeZone, utcMs: number): number {
  return utcMs - mod(utcMs + zone.offsetAt(utcMs), HOUR_MS);
}

function mod(a: number, b: number): number {
  return ((a % b) + b) % b;
}
