import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { itemBytes } from '../../src/sink/item-bytes.js';

const text = (parts: Uint8Array[] | undefined) => parts?.map((part) => Buffer.from(part).toString('utf8'));
const bytes = (s: string) => Buffer.from(s, 'utf8');

describe('itemBytes', () => {
  it('splits any compact page into its items, byte for byte as JSON.stringify wrote them', () => {
    const item = fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue());
    fc.assert(
      fc.property(fc.array(item, { maxLength: 20 }), fc.option(fc.string(), { nil: undefined }), (items, cursor) => {
        const body = bytes(JSON.stringify({ items, ...(cursor === undefined ? {} : { nextCursor: cursor }) }));
        expect(text(itemBytes(body, items.length))).toEqual(items.map((i) => JSON.stringify(i)));
      }),
    );
  });

  it('keeps the bytes as sent: escapes, key order and number forms are not normalized', () => {
    const body = bytes('{"nextCursor":"c]}","items":[ {"b":1.50,"a":"\\u00e9\\"]}[{"} ,{"items":[1]}\t]}');
    expect(text(itemBytes(body, 2))).toEqual(['{"b":1.50,"a":"\\u00e9\\"]}[{"}', '{"items":[1]}']);
  });

  it('finds items after other keys whose values hold brackets and nested objects', () => {
    const body = bytes('{"meta":{"items":[9,9]},"list":[[1],[2]],"items":[{"x":[{"y":{}}]}]}');
    expect(text(itemBytes(body, 1))).toEqual(['{"x":[{"y":{}}]}']);
  });

  it('an empty items array gives no lines', () => {
    expect(itemBytes(bytes('{"items":[]}'), 0)).toEqual([]);
  });

  it.each([
    ['a pretty-printed item (a line break between tokens)', '{"items":[{\n"a":1}]}', 1],
    ['a CR between tokens', '{"items":[{"a":1,\r"b":2}]}', 1],
    ['an element that is not an object', '{"items":[{"a":1},2]}', 2],
    ['a string element', '{"items":["a"]}', 1],
    ['an array element', '{"items":[[1]]}', 1],
    ['a second items key (JSON.parse keeps the last)', '{"items":[{"a":1}],"items":[{"b":2}]}', 1],
    ['a count other than the parsed one', '{"items":[{"a":1}]}', 2],
  ])('gives up (the caller stringifies) on %s', (_name, body, expected) => {
    expect(itemBytes(bytes(body), expected)).toBeUndefined();
  });

  it('gives up on bytes that are not valid UTF-8, which JSON.parse would have replaced', () => {
    const body = Buffer.concat([bytes('{"items":[{"a":"'), Buffer.from([0xff, 0xfe]), bytes('"}]}')]);
    expect(itemBytes(body, 1)).toBeUndefined();
  });

  it('line breaks inside strings are escaped in JSON, so an item with "\\n" in a value stays one line', () => {
    const items = [{ note: 'two\nlines\r\n', emoji: '😀 漢字 é' }];
    const body = bytes(JSON.stringify({ items }));
    const [line] = itemBytes(body, 1) ?? [];
    expect(Buffer.from(line!).includes(0x0a)).toBe(false);
    expect(JSON.parse(Buffer.from(line!).toString('utf8'))).toEqual(items[0]);
  });
});
