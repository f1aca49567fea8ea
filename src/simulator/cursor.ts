import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Opaque, tamper-evident cursors. A cursor carries the position to resume from, a digest of the
 * request parameters it belongs to and the time it was issued, signed with a key derived from the
 * seed (so a restarted simulator with the same seed still honours its cursors).
 */
export interface CursorState {
  position: number;
  issuedAtMs: number;
  /** A second number a route keeps with the position (a sync cursor's change sequence); absent for lists. */
  mark?: number;
}

export type CursorResult =
  | { ok: true; state: CursorState } |
  { ok: false; reason: 'invalid' | 'mismatch' | 'expired'; message: string };

const VERSION = 1;

export class CursorCodec {
  private readonly key: Buffer;
  /** Makes every cursor unique, so an empty page never hands back the cursor it was asked with. */
  private serial = 0;

  constructor(seed: number) {
    this.key = createHash('sha256').update(`bulk-extract-simulator-cursor:${seed}`).digest();
  }

  encode(binding: string, state: CursorState): string {
    const payload = Buffer.from(
      JSON.stringify([
        VERSION,
        digest(binding),
        state.position,
        state.issuedAtMs,
        this.serial++,
        ...(state.mark === undefined ? [] : [state.mark]),
      ]),
    ).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  /** `ttlMs` undefined means cursors never expire. */
  decode(cursor: string, binding: string, nowMs: number, ttlMs: number | undefined): CursorResult {
    const dot = cursor.indexOf('.');
    const payload = cursor.slice(0, dot);
    const signature = Buffer.from(cursor.slice(dot + 1));
    const expected = Buffer.from(this.sign(payload));
    if (dot < 0 || signature.length !== expected.length || !timingSafeEqual(signature, expected)) {
      return {
        ok: false,
        reason: 'invalid',
        message: 'Invalid cursor: it was not issued by this service or was altered.',
      };
    }
    const [version, boundTo, position, issuedAtMs, , mark] = JSON.parse(
      Buffer.from(payload, 'base64url').toString(),
    ) as [number, string, number, number, number, number | undefined];
    if (version !== VERSION)
      return { ok: false, reason: 'invalid', message: 'Invalid cursor: unknown version.' };
    if (boundTo !== digest(binding)) {
      return {
        ok: false,
        reason: 'mismatch',
        message:
          'Cursor does not match the request parameters: every parameter but cursor must be identical to the first request of the chain.',
      };
    }
    if (ttlMs !== undefined && nowMs - issuedAtMs > ttlMs) {
      return {
        ok: false,
        reason: 'expired',
        message: 'Cursor has expired. Restart the listing from its first page.',
      };
    }
    return { ok: true, state: mark === undefined ? { position, issuedAtMs } : { position, issuedAtMs, mark } };
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url').slice(0, 27);
  }
}

function digest(binding: string): string {
  return createHash('sha256').update(binding).digest('base64url').slice(0, 16);
}
