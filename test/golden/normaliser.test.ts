import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { CursorCodec } from '../../src/simulator/cursor.js';
import { Normaliser } from '../support/golden.js';

/** The first cursor the codec mints whose signature ends in `last`. */
function cursorEndingIn(codec: CursorCodec, last: string): string {
  for (let i = 0; i < 10_000; i++) {
    const cursor = codec.encode('binding', { position: 7, issuedAtMs: 1_767_225_630_000 });
    if (cursor.endsWith(last)) return cursor;
  }
  throw new Error(`no cursor ending in '${last}' in 10,000`);
}

describe('the golden normaliser', () => {
  const normalise = new Normaliser(tmpdir(), 'http://127.0.0.1:1');
  const codec = new CursorCodec(42);

  it.each(['-', '_', 'A'])('replaces a whole simulator cursor whose signature ends in %j', (last) => {
    const cursor = cursorEndingIn(codec, last);
    const shown = normalise.text(`{"cursor": "${cursor}"}`);
    expect(shown).toMatch(/^\{"cursor": "<simulator cursor 1 [A-Za-z0-9_-]{16} 7 1767225630000 \*>"\}$/);
  });

  it('leaves a dotted name that is no cursor as it is', () => {
    const text = '"path": "aaaaaaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbb"';
    expect(normalise.text(text)).toBe(text);
  });
});
