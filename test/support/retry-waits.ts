import { expect } from 'vitest';

/** The waits a CLI chose before its retries, in ms: the `delayMs` of its retry warnings (JSON lines on stderr). */
export function retryWaitsMs(stderr: string): number[] {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { delayMs?: unknown })
    .flatMap(({ delayMs }) => (typeof delayMs === 'number' ? [delayMs] : []));
}

/**
 * A command that gives up on an address where nothing listens "within `ms`": it retried, and the waits
 * its retry policy chose add up to less than `ms`. That is what the policy decides, whatever the load
 * of the machine running the test; `wallMs` (the spawn's own time, startup included) only guards
 * against a wait the log does not show, with room for a busy machine.
 */
export function expectGaveUpWithin(stderr: string, ms: number, wallMs: number): void {
  const waits = retryWaitsMs(stderr);
  expect(waits.length, 'it retried before giving up').toBeGreaterThan(0);
  expect(waits.reduce((sum, wait) => sum + wait, 0)).toBeLessThan(ms);
  expect(wallMs).toBeLessThan(6 * ms);
}
