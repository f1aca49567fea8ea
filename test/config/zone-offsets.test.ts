import { describe, expect, it } from 'vitest';
import { oddOffset, offsetText, zoneOffsets } from '../../src/config/zone-offsets.js';
import { MIN_POINT_TIME } from '../../src/resources/index.js';
import { isQuarterHourOffset, parseTimeZone } from '../../src/simulator/datapoints/time-zone.js';

/**
 * The job file's check of a timeZone's offset against the simulator's (which answers the
 * platform's 400): for every zone Node.js knows, at the default start, they agree on which zones
 * are refused, and the later start the check names is one the simulator takes.
 */
const ZONES = Intl.supportedValuesOf('timeZone');
const END = Date.UTC(2100, 0, 1);

describe('oddOffset', () => {
  it('refuses at 1900 exactly the zones whose offset the simulator refuses, and names a start it takes', () => {
    let refused = 0;
    for (const name of ZONES) {
      const zone = parseTimeZone(name);
      if (zone === undefined) continue;
      const odd = oddOffset(name, MIN_POINT_TIME, undefined, END);
      expect(odd !== undefined, name).toBe(!isQuarterHourOffset(zone, MIN_POINT_TIME));
      if (odd === undefined) continue;
      refused++;
      expect(odd.offsetMs, name).toBe(zone.offsetAt(MIN_POINT_TIME));
      expect(odd.laterStart, name).toBeDefined();
      expect(isQuarterHourOffset(zone, odd.laterStart!), `${name} at its later start`).toBe(true);
      expect(oddOffset(name, odd.laterStart!, undefined, END), `${name} from its later start`).toBeUndefined();
    }
    expect(refused, 'zones with a local mean time in 1900').toBeGreaterThan(20);
  });

  it('fixed offsets: whole quarter hours taken, others refused with no later start', () => {
    expect(oddOffset('UTC+05:45', MIN_POINT_TIME, undefined, END)).toBeUndefined();
    expect(oddOffset('UTC-03:30', MIN_POINT_TIME, undefined, END)).toBeUndefined();
    expect(oddOffset('UTC+05:20', MIN_POINT_TIME, undefined, END)).toEqual({ at: MIN_POINT_TIME, offsetMs: 320 * 60_000, laterStart: undefined });
  });

  it('offsets as text, to the second', () => {
    expect(offsetText(0)).toBe('+00:00');
    expect(offsetText(-(43 * 60 + 8) * 1000)).toBe('-00:43:08');
    expect(offsetText((5 * 3600 + 21 * 60 + 10) * 1000)).toBe('+05:21:10');
    expect(offsetText(-12 * 3_600_000)).toBe('-12:00');
  });

  it('an unknown zone has no offsets', () => {
    expect(zoneOffsets('Mars/Olympus')).toBeUndefined();
  });
});
