/**
 * The times DMS writes as text: timestamp properties with a zone
 * (`2024-01-01T00:00:00.000+00:00`, fractions to the microsecond) and dates (`2024-01-01`), read
 * character by character into epoch milliseconds and days since 1970-01-01.
 */

const DAY_MS = 86_400_000;

/**
 * Epoch milliseconds of a DMS timestamp: `YYYY-MM-DDTHH:MM:SS`, an optional fraction of 1 to 9
 * digits (cut to milliseconds, never rounded up into the next second), and `Z` or `±HH:MM`.
 * Undefined for anything else, a day or time that does not exist included (2023-02-29, 24:00).
 */
export function dmsTimestampMs(text: string): number | undefined {
  if (text.length < 20 || !punctuated(text, TIMESTAMP_PUNCTUATION)) return undefined;
  const days = dateAt(text);
  const hour = digitsAt(text, 11, 2);
  const minute = digitsAt(text, 14, 2);
  const second = digitsAt(text, 17, 2);
  const clock = hour >= 0 && hour <= 23 && minute >= 0 && minute <= 59 && second >= 0 && second <= 59;
  if (days === undefined || !clock) return undefined;
  let at = 19;
  let ms = 0;
  if (text.charCodeAt(at) === DOT) {
    const start = ++at;
    // Cut to milliseconds: digits past the third are checked, not counted.
    for (; at < text.length && isDigit(text.charCodeAt(at)); at++) {
      if (at - start < 3) ms = ms * 10 + text.charCodeAt(at) - ZERO;
    }
    const count = at - start;
    if (count === 0 || count > 9) return undefined;
    for (let k = count; k < 3; k++) ms *= 10;
  }
  const offset = zoneAt(text, at);
  if (offset === undefined) return undefined;
  return days * DAY_MS + (hour * 60 + minute - offset) * 60_000 + second * 1000 + ms;
}

/** Days since 1970-01-01 of a DMS date, `YYYY-MM-DD`; undefined for anything else. */
export function dmsDateDays(text: string): number | undefined {
  return text.length === 10 && punctuated(text, DATE_PUNCTUATION) ? dateAt(text) : undefined;
}

const ZERO = 0x30;
const DOT = 0x2e;
/** Where a timestamp and a date have which character: `YYYY-MM-DDTHH:MM:SS`, `YYYY-MM-DD`. */
const DATE_PUNCTUATION: readonly [number, number][] = [[4, 0x2d], [7, 0x2d]];
const TIMESTAMP_PUNCTUATION: readonly [number, number][] = [...DATE_PUNCTUATION, [10, 0x54], [13, 0x3a], [16, 0x3a]];

function punctuated(text: string, marks: readonly [number, number][]): boolean {
  return marks.every(([at, code]) => text.charCodeAt(at) === code);
}

function isDigit(code: number): boolean {
  return code >= ZERO && code <= ZERO + 9;
}

/** The `count` ASCII digits at `at` as a number; -1 when one of them is not a digit. */
function digitsAt(text: string, at: number, count: number): number {
  let value = 0;
  for (let k = at; k < at + count; k++) {
    const code = text.charCodeAt(k);
    if (!isDigit(code)) return -1;
    value = value * 10 + code - ZERO;
  }
  return value;
}

/** The day of `YYYY-MM-DD` at the start of `text`, in days since 1970-01-01; undefined for none. */
function dateAt(text: string): number | undefined {
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  return year < 0 || month < 0 || day < 0 ? undefined : civilDays(year, month, day);
}

/** The zone that ends `text` at `at`, `Z` or `±HH:MM` (hours up to 23), in minutes east of UTC. */
function zoneAt(text: string, at: number): number | undefined {
  const sign = text.charCodeAt(at);
  if (sign === 0x5a) return text.length === at + 1 ? 0 : undefined;
  if ((sign !== 0x2b && sign !== 0x2d) || text.length !== at + 6 || text.charCodeAt(at + 3) !== 0x3a) return undefined;
  const hours = digitsAt(text, at + 1, 2);
  const minutes = digitsAt(text, at + 4, 2);
  if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) return undefined;
  return (sign === 0x2d ? -1 : 1) * (hours * 60 + minutes);
}

/**
 * Days from 1970-01-01 to a day of the proleptic Gregorian calendar, years 1 to 9999 (Howard
 * Hinnant's days_from_civil); undefined for a day that does not exist. Date.UTC is not used: it
 * reads the years 0 to 99 as 1900 to 1999.
 */
function civilDays(year: number, month: number, day: number): number | undefined {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > lengths[month - 1]!) return undefined;
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}
