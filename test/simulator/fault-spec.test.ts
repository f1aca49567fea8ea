import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { decideFault, type FaultKind, FaultPlanner, RateGate } from '../../src/simulator/faults.js';
import { type FaultOptions, faultOptionsSchema, parseFaultSpec, parseInstancesSpec } from '../../src/simulator/options.js';
import { createFakeClock } from '../support/fake-clock.js';

const DEFAULTS = {
  rate429: 0,
  rate429RetryAfter: 0,
  retryAfterSeconds: 1,
  rate500: 0,
  rate502: 0,
  rate503: 0,
  rate504: 0,
  rate5xx: 0,
  htmlErrors: false,
  resetRate: 0,
  truncateRate: 0,
  malformedRate: 0,
  shortPageRate: 0,
  latencyMs: 0,
  jitterMs: 0,
  tokenTtlSeconds: 3600,
};

function faults(input: Partial<FaultOptions> = {}): FaultOptions {
  return faultOptionsSchema.parse(input);
}

function configError(spec: string): ConfigError {
  try {
    parseFaultSpec(spec);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`parseFaultSpec('${spec}') did not throw`);
}

describe('parseFaultSpec', () => {
  it('key=value pairs parse with numbers, booleans and every default filled in', () => {
    const parsed = parseFaultSpec('rate429=0.1,latencyMs=20,htmlErrors=true');
    expect(parsed).toEqual({ ...DEFAULTS, rate429: 0.1, latencyMs: 20, htmlErrors: true });
    expect(parsed.maxConcurrent).toBeUndefined();
    expect(parsed.maxRps).toBeUndefined();
    expect(parsed.cursorTtlMs).toBeUndefined();
  });

  it('tolerates spaces around pairs and an empty spec gives the defaults', () => {
    expect(parseFaultSpec(' rate503 = 0.25 , maxConcurrent=4 ')).toEqual({
      ...DEFAULTS,
      rate503: 0.25,
      maxConcurrent: 4,
    });
    expect(parseFaultSpec('')).toEqual(DEFAULTS);
  });

  it('the JSON form parses with defaults filled in', () => {
    expect(parseFaultSpec('{"rate5xx":0.2,"maxRps":23,"cursorTtlMs":60000,"htmlErrors":true}')).toEqual({
      ...DEFAULTS,
      rate5xx: 0.2,
      maxRps: 23,
      cursorTtlMs: 60_000,
      htmlErrors: true,
    });
  });

  it('invalid JSON is a ConfigError', () => {
    expect(configError('{"rate429":').message).toMatch(/JSON/);
  });

  it('an unknown key is a ConfigError whose message names the key', () => {
    expect(configError('rate429=0.1,bogusKey=1').message).toContain('bogusKey');
    expect(configError('{"otherBogus":1}').message).toContain('otherBogus');
  });

  it('a rate above 1 is a ConfigError naming the key', () => {
    const error = configError('rate503=1.5');
    expect(error.message).toContain('rate503');
    expect(error.code).toBe('E_CONFIG');
  });

  it('a non-numeric value is a ConfigError naming the key', () => {
    expect(configError('latencyMs=slow').message).toContain('latencyMs');
  });

  it('status and body fault rates summing over 1 are a ConfigError', () => {
    expect(configError('rate429=0.6,rate5xx=0.3,truncateRate=0.2').message).toMatch(/add up to at most 1/);
  });

  it('shortPageRate is not part of the sum', () => {
    expect(parseFaultSpec('rate429=1,shortPageRate=1')).toMatchObject({ rate429: 1, shortPageRate: 1 });
  });

  it("'rate429' without '=' is a ConfigError", () => {
    expect(configError('rate429').message).toMatch(/key=value/);
    expect(configError('rate429=0.1=0.2').message).toMatch(/key=value/);
  });
});

describe('decideFault', () => {
  const options = faults({
    rate429: 0.01,
    rate429RetryAfter: 0.02,
    rate500: 0.03,
    rate502: 0.04,
    rate503: 0.05,
    rate504: 0.06,
    resetRate: 0.07,
    truncateRate: 0.08,
    malformedRate: 0.09,
  });
  // Cumulative upper bounds, in table order.
  const table: [FaultKind, number][] = [
    ['429', 0.01],
    ['429-retry-after', 0.03],
    ['500', 0.06],
    ['502', 0.1],
    ['503', 0.15],
    ['504', 0.21],
    ['reset', 0.28],
    ['truncate', 0.36],
    ['malformed', 0.45],
  ];
  const eps = 1e-9;

  it.each(table)('%s: a draw just below its cumulative bound %d picks it', (kind, bound) => {
    expect(decideFault(bound - eps, options)).toBe(kind);
  });

  it.each(
    table.map(([kind, bound], i): [FaultKind, number, FaultKind | undefined] => [
      kind,
      bound,
      table[i + 1]?.[0],
    ]),
  )('%s: a draw just above its bound %d picks the next kind (%s)', (_kind, bound, next) => {
    expect(decideFault(bound + eps, options)).toBe(next);
  });

  it('a draw of 0 picks the first fault with a non-zero rate; no rates means no fault', () => {
    expect(decideFault(0, options)).toBe('429');
    expect(decideFault(0, faults({ rate503: 0.5 }))).toBe('503');
    expect(decideFault(0, faults())).toBeUndefined();
    expect(decideFault(0.999_999, faults())).toBeUndefined();
  });

  it('a rate of 1 catches every draw in [0, 1)', () => {
    const all = faults({ malformedRate: 1 });
    for (const draw of [0, 0.25, 0.5, 0.999_999_999]) expect(decideFault(draw, all)).toBe('malformed');
  });

  it('rate5xx spreads evenly over 500, 502, 503 and 504', () => {
    const spread = faults({ rate5xx: 0.4 });
    expect(decideFault(0.05, spread)).toBe('500');
    expect(decideFault(0.15, spread)).toBe('502');
    expect(decideFault(0.25, spread)).toBe('503');
    expect(decideFault(0.35, spread)).toBe('504');
    expect(decideFault(0.45, spread)).toBeUndefined();

    const counts = new Map<string, number>();
    const steps = 100_000;
    for (let i = 0; i < steps; i++) {
      const kind = decideFault(i / steps, spread) ?? 'none';
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
    }
    for (const kind of ['500', '502', '503', '504']) {
      expect(Math.abs((counts.get(kind) ?? 0) - 10_000)).toBeLessThanOrEqual(1);
    }
    expect(Math.abs((counts.get('none') ?? 0) - 60_000)).toBeLessThanOrEqual(1);
  });

  it('rate5xx adds a quarter to each explicit 5xx rate', () => {
    const mixed = faults({ rate503: 0.1, rate5xx: 0.4 });
    // 500: [0, 0.1), 502: [0.1, 0.2), 503: [0.2, 0.4), 504: [0.4, 0.5)
    expect(decideFault(0.21, mixed)).toBe('503');
    expect(decideFault(0.39, mixed)).toBe('503');
    expect(decideFault(0.41, mixed)).toBe('504');
    expect(decideFault(0.51, mixed)).toBeUndefined();
  });
});

describe('FaultPlanner', () => {
  it('plans are a pure function of (seed, request, occurrence)', () => {
    const options = faults({ rate429: 0.3, rate503: 0.2, shortPageRate: 0.3, latencyMs: 10, jitterMs: 5 });
    const a = new FaultPlanner(9, options);
    const b = new FaultPlanner(9, options);
    const binding = '["events",100,null,true,[]]';
    const planA = Array.from({ length: 50 }, (_, i) => a.plan(binding, (i % 5) * 100, 100));
    const planB = Array.from({ length: 50 }, (_, i) => b.plan(binding, (i % 5) * 100, 100));
    expect(planA).toEqual(planB);
    for (const plan of planA) {
      expect(plan.delayMs).toBeGreaterThanOrEqual(10);
      expect(plan.delayMs).toBeLessThan(15);
      if (plan.shortLimit !== undefined) {
        expect(plan.shortLimit).toBeGreaterThanOrEqual(0);
        expect(plan.shortLimit).toBeLessThan(100);
      }
    }
    // Repeats of one request meet different fates: a retry is not doomed to the same fault.
    const kinds = new Set(planA.filter((_, i) => i % 5 === 0).map((plan) => plan.fault ?? 'none'));
    expect(kinds.size).toBeGreaterThan(1);
    // Another seed gives another sequence.
    const c = new FaultPlanner(10, options);
    const planC = Array.from({ length: 50 }, (_, i) => c.plan(binding, (i % 5) * 100, 100));
    expect(planC).not.toEqual(planA);
  });
});

describe('RateGate', () => {
  it('starts with a one-second burst, refuses beyond it, and refills continuously', () => {
    const clock = createFakeClock();
    const gate = new RateGate(4, clock);
    for (let i = 0; i < 4; i++) expect(gate.tryTake()).toBe(true);
    expect(gate.tryTake()).toBe(false);

    clock.advance(249);
    expect(gate.tryTake()).toBe(false);
    clock.advance(1);
    expect(gate.tryTake()).toBe(true);
    expect(gate.tryTake()).toBe(false);

    clock.advance(500);
    expect(gate.tryTake()).toBe(true);
    expect(gate.tryTake()).toBe(true);
    expect(gate.tryTake()).toBe(false);
  });

  it('an idle gate refills to at most one second of burst', () => {
    const clock = createFakeClock();
    const gate = new RateGate(3, clock);
    clock.advance(60_000);
    let taken = 0;
    while (gate.tryTake()) taken++;
    expect(taken).toBe(3);
  });

  it('a refused request does not consume a token', () => {
    const clock = createFakeClock();
    const gate = new RateGate(2, clock);
    expect(gate.tryTake()).toBe(true);
    expect(gate.tryTake()).toBe(true);
    for (let i = 0; i < 10; i++) expect(gate.tryTake()).toBe(false);
    clock.advance(500);
    expect(gate.tryTake()).toBe(true);
  });

  it('a rate below 1/s (maxRps 0.5, allowed by the options) admits one request every 2 s', () => {
    const clock = createFakeClock();
    const gate = new RateGate(0.5, clock);
    const admitted: number[] = [];
    for (let t = 0; t <= 10_000; t += 500) {
      if (gate.tryTake()) admitted.push(t);
      clock.advance(500);
    }
    expect(admitted.length).toBeGreaterThanOrEqual(5);
    expect(admitted.length).toBeLessThanOrEqual(6);
    expect(faultOptionsSchema.parse({ maxRps: 0.5 }).maxRps).toBe(0.5);
  });
});

describe('FaultPlanner short pages', () => {
  it('serves at most one empty page per position, so shortPageRate 1 with limit 1 still progresses', () => {
    const planner = new FaultPlanner(3, parseFaultSpec('shortPageRate=1'));
    const first = planner.plan('["events",1]', 0, 1);
    const again = planner.plan('["events",1]', 0, 1);
    expect(first.shortLimit).toBe(0);
    expect(again.shortLimit).toBe(1);
  });
});

describe('parseInstancesSpec (--instances)', () => {
  it('spreads one count N as N assets, 2N activities, N time series and 2N edges', () => {
    expect(parseInstancesSpec('1_000')).toEqual({ assets: 1000, activities: 2000, timeseries: 1000, edges: 2000 });
  });

  it('takes kind=count pairs, the kinds not named keeping their defaults', () => {
    expect(parseInstancesSpec('assets=1000000, edges=0')).toEqual({ assets: 1_000_000, activities: 2000, timeseries: 1000, edges: 0 });
  });

  it.each([
    ['assets', /expected N or kind=count pairs/],
    ['assets=-1', /expected N or kind=count pairs/],
    ['nodes=5', /Invalid --instances: .*nodes/],
    ['assets=2000000000', /Invalid --instances: assets: .*1000000000/],
  ])('refuses %j naming the problem', (spec, message) => {
    expect(() => parseInstancesSpec(spec)).toThrow(message);
  });
});
