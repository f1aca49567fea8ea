import { describe, expect, it } from 'vitest';
import {
  bothWays,
  EVERY_KIND_REF,
  everyKindColumns,
  scannedPage,
  walks,
} from '../support/instance-walk.js';

/**
 * InstanceWalk case by case: what it takes itself, what it leaves to the parse (one case each),
 * and that the rows are the same either way (the walk on, and forced off).
 */
const NODE = everyKindColumns('node');
const EDGE = everyKindColumns('edge');
const GROUP = '"properties":{"test_space":{"Everything/v1":';

/** A node's text, its view's group `group` (JSON text of its members), and more top-level members. */
function node(group: string, more = ''): string {
  return '{"instanceType":"node","space":"site","externalId":"n1","version":3,"createdTime":1700000000000,' +
    `"lastUpdatedTime":1700000100000${more},${GROUP}{${group}}}}}`;
}

function expectSame(texts: readonly string[], specs = NODE) {
  const { walked, parsed } = bothWays(EVERY_KIND_REF, specs, scannedPage(texts));
  expect(walked).toEqual(parsed);
  return parsed;
}

const EVERY_VALUE = [
  '"text":"a\\"b\\\\c\\u00e9\\n\\/ ünï ✓ 温度 🙂 \\ud83d\\ude00"',
  '"texts":["x","", "\\t"]',
  '"int32":-2147483648', '"int32s":[2147483647,0,-1,1.0]',
  '"int64":-9007199254740991', '"int64s":[9007199254740991,1e3,-0]',
  '"float32":3.4028234663852886e38', '"float32s":[0.1,-1.5E-3]',
  '"float64":-2.5e-7', '"float64s":[1,1.50,-0.0]',
  '"boolean":false', '"booleans":[true,false]',
  '"timestamp":"2024-02-29T23:59:59.999999999-12:30"', '"timestamps":["0001-01-01T00:00:00Z",1700000000000,-1]',
  '"date":"2024-02-29"', '"dates":["9999-12-31","\\u0032024-01-01"]',
  '"json":{"a":[1,{"b":null}],"c":"d","e":-1.25,"f":true}', '"jsons":[1,"x",{"y":2},[],{}]',
  '"direct":{"externalId":"e","space":"s"}', '"directs":[{"space":"s","externalId":"f\\u00e9"}]',
  '"enum":"A"', '"enums":[]',
  '"type":{"space":"t","externalId":"T"}',
].join(',');

describe('InstanceWalk takes the plain case itself', () => {
  it('an instance with a value of every kind, scalar and list, escapes and Unicode in its strings', () => {
    const text = node(EVERY_VALUE, ',"type":{"space":"types","externalId":"Pump"},"deletedTime":1700000200000');
    expect(walks(EVERY_KIND_REF, NODE, text)).toBe(true);
    const parsed = expectSame([text]);
    expect(parsed.rows![0]).toContain('a"b\\cé\n/ ünï ✓ 温度 🙂 😀');
  });

  it('whitespace and line breaks between every token, members in any order', () => {
    const compact = node(EVERY_VALUE);
    const spread = JSON.stringify(JSON.parse(compact), null, '\t').replace(/,/g, ' ,\r\n ');
    const reordered = JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(compact) as object).reverse()));
    for (const text of [spread, reordered]) expect(walks(EVERY_KIND_REF, NODE, text)).toBe(true);
    expectSame([compact, spread, reordered]);
  });

  it('nulls and absent values, an empty group, empty lists', () => {
    const texts = [
      node('"text":null,"texts":null,"json":null,"direct":null,"directs":null,"date":null', ',"deletedTime":null,"type":null'),
      node(''),
      node('"texts":[],"directs":[],"jsons":[]'),
    ];
    for (const text of texts) expect(walks(EVERY_KIND_REF, NODE, text)).toBe(true);
    expectSame(texts);
  });

  it('json values: copied when their bytes are their text, else written again as the parse does', () => {
    const values = [
      '{"a":1}', '{ "a" : 1 }', '"\\u0041"', '1.50', '1e3', '-0', '0.1', '1E+21', '{"2":"b","1":"a"}', '[1,[2,[3]]]',
      '{"__proto__":{"x":1}}', '"a/b"', '"\\/"', '"\\ud800"', '12345678901234.5678', '{"key with \\"quotes\\"":"\\n"}',
      '{"\\u0061":1,"b":"\\u001f"}', '"\\u000a"', '"\\uD800"', '"\\ud83d\\ude00"', '{"\\u0031":1,"0":2}',
    ];
    const texts = values.map((json) => node(`"json":${json},"jsons":[${json}]`));
    for (const text of texts) expect(walks(EVERY_KIND_REF, NODE, text)).toBe(true);
    const parsed = expectSame(texts);
    expect(parsed.rows!.map((row) => row[24])).toEqual(values.map((json) => JSON.stringify(JSON.parse(json))));
  });

  it('an edge with its type, start and end nodes', () => {
    const text = '{"instanceType":"edge","space":"site","externalId":"e1","version":1,"type":{"space":"t","externalId":"link"},' +
      '"startNode":{"space":"site","externalId":"a"},"endNode":{"externalId":"b","space":"site"},"createdTime":1,' +
      `"lastUpdatedTime":2,${GROUP}{"text":"x"}}}}`;
    expect(walks(EVERY_KIND_REF, EDGE, text)).toBe(true);
    expectSame([text], EDGE);
  });

  it('a page with long numbers: safe integers of 16 digits are walked, the parse is exact for the others', () => {
    const texts = [
      node('"int64":9007199254740991,"int64s":[-9007199254740991]'),
      node('"int64":9007199254740993'),
      node('"json":{"id":12345678901234567890}'),
      node('"float64":12345678901234567'),
      node('"text":"12345678901234567890"'),
    ];
    expect(texts.map((text) => walks(EVERY_KIND_REF, NODE, text))).toEqual([true, false, false, false, true]);
    const parsed = expectSame(texts);
    expect(parsed.rows!.map((row) => row[12])).toEqual(['9007199254740991n', '9007199254740993n', null, null, null]);
  });
});

/** Instances the walk leaves to the parse, by what makes each not the plain case. */
const FALLBACKS: Record<string, string> = {
  'a top-level key with an escape': node('', ',"deletedTim\\u0065":1'),
  'a group key with an escape': node('"t\\u0065xt":"a"'),
  'a direct relation key with an escape': node('"direct":{"sp\\u0061ce":"s","externalId":"e"}'),
  'a field twice': node('', ',"version":4'),
  'properties twice': `${node('"text":"a"').slice(0, -1)},${GROUP}{}}}}`,
  'a property twice': node('"text":"a","text":"b"'),
  'a direct relation key twice': node('"direct":{"space":"s","externalId":"e","space":"t"}'),
  'a json key twice': node('"json":{"a":1,"a":2}'),
  'a json key twice, once with an escape': node('"jsons":[{"a":1,"\\u0061":2}]'),
  'a field without a column': node('', ',"existingVersion":2'),
  'startNode on a node': node('', ',"startNode":{"space":"s","externalId":"a"}'),
  'a property not in the view': node('"addedLater":true'),
  'a property of an unknown type': node('"shape":{"type":"Point"}'),
  'another view\'s group': node('"text":"a"').replace(GROUP, '"properties":{"test_space":{"Other/v1":{"x":1},"Everything/v1":'),
  'an empty group of another view': node('"text":"a"').replace(GROUP, '"properties":{"test_space":{"Other/v1":{},"Everything/v1":'),
  'another space\'s group': node('"text":"a"').replace('}}}}', '}},"other":{"Thing/v1":{"x":1}}}}'),
  'properties absent': node('').replace(`,${GROUP}{}}}`, ''),
  'properties null': node('').replace(`${GROUP}{}}}`, '"properties":null'),
  'properties empty': node('').replace(`${GROUP}{}}}`, '"properties":{}'),
  'the group not an object': node('').replace(`${GROUP}{}}}`, `${GROUP}[]}}`),
  'a text not a string': node('"text":7'),
  'an int32 out of range': node('"int32":2147483648'),
  'an int32 not an integer': node('"int32":1.5'),
  'an int64 not safe': node('"int64":9007199254740992'),
  'an int64 as a string': node('"int64":"1"'),
  'a float32 out of range': node('"float32":3.5e38'),
  'a boolean as a string': node('"boolean":"true"'),
  'a timestamp that does not exist': node('"timestamp":"2023-02-29T00:00:00Z"'),
  'a timestamp without a zone': node('"timestamp":"2024-01-01T00:00:00"'),
  'a timestamp not a safe integer': node('"timestamp":1.5'),
  'a date that does not exist': node('"date":"2024-13-01"'),
  'a date as a number': node('"date":20240101'),
  'a direct relation with another key': node('"direct":{"space":"s","externalId":"e","version":1}'),
  'a direct relation without its space': node('"direct":{"externalId":"e"}'),
  'a direct relation with a null': node('"direct":{"space":null,"externalId":"e"}'),
  'a direct relation as a string': node('"direct":"s:e"'),
  'a list with a null': node('"texts":["a",null]'),
  'a list not a list': node('"texts":"a"'),
  'a list with a value of another type': node('"int32s":[1,"2"]'),
  'an integer not safe in a json value': node('"jsons":[{"n":[9007199254740993]}]'),
  'the version not an integer': node('').replace('"version":3', '"version":"3"'),
  'a required field missing': node('').replace('"space":"site",', ''),
  'a required field null': node('').replace('"externalId":"n1"', '"externalId":null'),
  'an instance not an object': '[1]',
  'an instance a string': '"text"',
};

describe('InstanceWalk leaves to the parse what is not the plain case', () => {
  it.each(Object.entries(FALLBACKS))('%s: not walked, the same row or error either way', (_name, text) => {
    expect(walks(EVERY_KIND_REF, NODE, text)).toBe(false);
    expectSame([text, node('"text":"after"')]);
  });

  it('a float64 past the range of a double never comes to the walk: its page does not scan, and the client refuses it', () => {
    expect(() => scannedPage([node('"float64":1e400')])).toThrow('the test page does not scan');
  });

  it('an edge without its start node: the same error either way', () => {
    const text = '{"instanceType":"edge","space":"s","externalId":"e","version":1,"type":{"space":"t","externalId":"l"},' +
      `"endNode":{"space":"s","externalId":"b"},"createdTime":1,"lastUpdatedTime":2,${GROUP}{}}}}`;
    expect(walks(EVERY_KIND_REF, EDGE, text)).toBe(false);
    expect(expectSame([text], EDGE).error).toMatch(/no valid 'startNode'/);
  });

  it('what is left to the parse changes nothing the walk wrote before it', () => {
    const texts = [node('"text":"a"'), FALLBACKS['a list with a null']!, node('"text":"b"'), FALLBACKS['another view\'s group']!];
    const { walked, parsed, taken } = bothWays(EVERY_KIND_REF, NODE, scannedPage(texts));
    expect(taken).toBe(2);
    expect(walked).toEqual(parsed);
  });
});
