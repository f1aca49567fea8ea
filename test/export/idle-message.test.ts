import { describe, expect, it } from 'vitest';
import { idleMessage, idleReason } from '../../src/export/index.js';

/** The "nothing to do" of an idle stream names only the modes its job file would accept. */
describe('idleMessage and idleReason', () => {
  const since = '2026-01-01T00:01:00.000Z';
  const complete = (scheduledModes?: ('incremental' | 'snapshot')[]) => ({ stream: 'points', reason: 'complete' as const, since, scheduledModes });

  it('suggests snapshot where the stream accepts it (or where it is not known)', () => {
    for (const idle of [complete(['incremental', 'snapshot']), complete(['snapshot']), complete()]) {
      expect(idleMessage(idle)).toBe(`points: complete since ${since}; nothing to do: use --fresh, or mode: snapshot for a new export each run`);
      expect(idleReason(idle)).toBe(`complete since ${since}: use --fresh to export it again, or mode: snapshot for a new export each run`);
    }
  });

  it('suggests incremental where only that is accepted, and no mode where none is', () => {
    expect(idleReason(complete(['incremental']))).toBe(
      `complete since ${since}: use --fresh to export it again, or mode: incremental to read, each run, what changed since the last`,
    );
    expect(idleMessage(complete([]))).toBe(`points: complete since ${since}; nothing to do: use --fresh`);
    expect(idleReason(complete([]))).not.toContain('mode:');
  });

  it('a waiting incremental stream names no mode, and the one case it has no window in: a clock not past its last run', () => {
    expect(idleReason({ stream: 'events', reason: 'waiting', since })).toBe(
      `its last run started at ${since}, and this one not later (is the clock set back?): no new window to read`,
    );
    expect(idleReason({ stream: 'events', reason: 'waiting', since })).not.toContain('safetyLag');
  });
});
