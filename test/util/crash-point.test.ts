import { describe, expect, it } from 'vitest';
import { Failpoints } from '../../src/util/crash-point.js';

/** Failpoints over `env` whose kills are counted instead of made. */
function failpoints(env: Record<string, string>): { points: Failpoints; kills: () => number } {
  let kills = 0;
  const points = new Failpoints(env, () => kills++);
  return { points, kills: () => kills };
}

describe('Failpoints: BULK_EXTRACT_CRASH_AT=<point>:<n> kills at the n-th time the point is reached', () => {
  it('on the n-th hit of that point only, other points not counted', () => {
    const { points, kills } = failpoints({ BULK_EXTRACT_CRASH_AT: 'after-append:3' });
    points.reached('after-append');
    points.reached('after-checkpoint-write');
    points.reached('after-append');
    expect(kills()).toBe(0);
    points.reached('after-append');
    expect(kills()).toBe(1);
    points.reached('after-append');
    expect(kills()).toBe(1);
  });

  it('counts per object: two failpoints read from the same environment do not share hits', () => {
    const env = { BULK_EXTRACT_CRASH_AT: 'after-shard-rename:2' };
    const first = failpoints(env);
    const second = failpoints(env);
    first.points.reached('after-shard-rename');
    second.points.reached('after-shard-rename');
    expect([first.kills(), second.kills()]).toEqual([0, 0]);
    first.points.reached('after-shard-rename');
    expect([first.kills(), second.kills()]).toEqual([1, 0]);
    second.points.reached('after-shard-rename');
    expect([first.kills(), second.kills()]).toEqual([1, 1]);
  });

  it.each([[{}], [{ BULK_EXTRACT_CRASH_AT: 'after-append' }], [{ BULK_EXTRACT_CRASH_AT: 'after-append:x' }]])(
    'never kills when unset or not <point>:<n> (%j)',
    (env: Record<string, string>) => {
      const { points, kills } = failpoints(env);
      for (let i = 0; i < 5; i++) points.reached('after-append');
      expect(kills()).toBe(0);
    },
  );
});

describe('Failpoints: BULK_EXTRACT_FAIL_WRITE=<CODE>:<n> fails the n-th file write with that code', () => {
  it('the n-th write only, with the code, syscall and path of a real write error', () => {
    const { points } = failpoints({ BULK_EXTRACT_FAIL_WRITE: 'enospc:2' });
    expect(points.writeError('/out/a')).toBeUndefined();
    const error = points.writeError('/out/b');
    expect(error).toMatchObject({ code: 'ENOSPC', syscall: 'write', path: '/out/b' });
    expect(error?.message).toBe("ENOSPC: injected write error, write '/out/b'");
    expect(points.writeError('/out/c')).toBeUndefined();
  });

  it('counts per object: two failpoints read from the same environment do not share writes', () => {
    const env = { BULK_EXTRACT_FAIL_WRITE: 'EIO:1' };
    const first = failpoints(env).points;
    expect(first.writeError('/out/a')?.code).toBe('EIO');
    expect(failpoints(env).points.writeError('/out/a')?.code).toBe('EIO');
    expect(first.writeError('/out/b')).toBeUndefined();
  });

  it('fails no write when unset', () => {
    const { points } = failpoints({});
    expect([1, 2, 3].map((i) => points.writeError(`/out/${i}`))).toEqual([undefined, undefined, undefined]);
  });
});
