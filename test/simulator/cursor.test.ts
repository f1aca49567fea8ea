import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CursorCodec } from '../../src/simulator/cursor.js';

const binding = '["events",100,null,true,[]]';

describe('CursorCodec', () => {
  it('round-trips any position and issue time for the same binding', () => {
    const codec = new CursorCodec(7);
    fc.assert(
      fc.property(fc.nat({ max: 1e9 }), fc.nat({ max: 2 ** 45 }), (position, issuedAtMs) => {
        const decoded = codec.decode(
          codec.encode(binding, { position, issuedAtMs }),
          binding,
          issuedAtMs,
          undefined,
        );
        expect(decoded).toEqual({ ok: true, state: { position, issuedAtMs } });
      }),
    );
  });

  it('round-trips a mark beside the position (a sync cursor\'s change sequence), and leaves it out when not given', () => {
    const codec = new CursorCodec(7);
    fc.assert(
      fc.property(fc.integer({ min: -1, max: 1e12 }), fc.nat({ max: 1e9 }), (position, mark) => {
        const decoded = codec.decode(codec.encode(binding, { position, issuedAtMs: 5, mark }), binding, 5, undefined);
        expect(decoded).toStrictEqual({ ok: true, state: { position, issuedAtMs: 5, mark } });
      }),
    );
    expect(codec.decode(codec.encode(binding, { position: 3, issuedAtMs: 5 }), binding, 5, undefined)).toStrictEqual({
      ok: true,
      state: { position: 3, issuedAtMs: 5 },
    });
  });

  it('never hands out the same cursor twice, even for the same position in the same millisecond', () => {
    const codec = new CursorCodec(7);
    const first = codec.encode(binding, { position: 5, issuedAtMs: 1 });
    expect(codec.encode(binding, { position: 5, issuedAtMs: 1 })).not.toBe(first);
  });

  it('is honoured by a restarted simulator with the same seed, not by one with another seed', () => {
    const cursor = new CursorCodec(7).encode(binding, { position: 5, issuedAtMs: 1 });
    expect(new CursorCodec(7).decode(cursor, binding, 1, undefined).ok).toBe(true);
    expect(new CursorCodec(8).decode(cursor, binding, 1, undefined)).toMatchObject({
      ok: false,
      reason: 'invalid',
    });
  });

  it('rejects any single-character change as invalid', () => {
    const codec = new CursorCodec(7);
    const cursor = codec.encode(binding, { position: 123, issuedAtMs: 1 });
    fc.assert(
      fc.property(
        fc.nat({ max: cursor.length - 1 }),
        fc.constantFrom('A', 'z', '0', '.', '_'),
        (at, replacement) => {
          fc.pre(cursor[at] !== replacement);
          const tampered = cursor.slice(0, at) + replacement + cursor.slice(at + 1);
          expect(codec.decode(tampered, binding, 1, undefined)).toMatchObject({
            ok: false,
            reason: 'invalid',
          });
        },
      ),
    );
  });

  it.each(['', 'garbage', '.', 'a.b', 'x'.repeat(500)])('rejects the malformed cursor %j', (cursor) => {
    expect(new CursorCodec(7).decode(cursor, binding, 1, undefined)).toMatchObject({
      ok: false,
      reason: 'invalid',
    });
  });

  it('rejects a cursor used with other parameters', () => {
    const codec = new CursorCodec(7);
    const cursor = codec.encode(binding, { position: 1, issuedAtMs: 1 });
    expect(codec.decode(cursor, '["events",1000,null,true,[]]', 1, undefined)).toMatchObject({
      ok: false,
      reason: 'mismatch',
    });
  });

  it('expires a cursor strictly after its TTL', () => {
    const codec = new CursorCodec(7);
    const cursor = codec.encode(binding, { position: 1, issuedAtMs: 1000 });
    expect(codec.decode(cursor, binding, 1000 + 60_000, 60_000).ok).toBe(true);
    expect(codec.decode(cursor, binding, 1001 + 60_000, 60_000)).toMatchObject({
      ok: false,
      reason: 'expired',
    });
  });
});
