import { Table, tableToIPC } from 'apache-arrow';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PageItems } from '../../src/page/page-items.js';
import { scanPage } from '../../src/page/page-scan.js';
import { RESOURCES, type Resource, resourceSpec, streamColumns } from '../../src/resources/index.js';
import { newColumn } from '../../src/sink/parquet/column-builders.js';
import { Utf8Column } from '../../src/sink/parquet/columns.js';
import { ItemWalk } from '../../src/sink/collections/item-walk.js';
import { RowGroupBuilder } from '../../src/sink/collections/row-group.js';
import { EXTRA_COLUMN } from '../../src/sink/parquet/schemas.js';
import { createDataset } from '../../src/simulator/dataset/dataset.js';

/** A page body of these item texts, as the platform serves it, scanned. */
function scannedPage(itemTexts: readonly string[]): PageItems {
  const body = Buffer.from(`{"items":[${itemTexts.join(',')}],"nextCursor":"c"}`);
  const scan = scanPage(body);
  if (scan === undefined) throw new Error('the test page does not scan');
  return PageItems.scanned(body, scan);
}

/** The builder's batch as IPC bytes, or the error adding the items threw. */
function build(resource: Resource, metadataColumns: readonly string[], add: (builder: RowGroupBuilder) => void) {
  const builder = new RowGroupBuilder(resource, 4, metadataColumns);
  try {
    add(builder);
  } catch (error) {
    return { error: (error as Error).message };
  }
  return { ipc: Buffer.from(tableToIPC(new Table(builder.batch()), 'stream')).toString('base64') };
}

/** Items read from their bytes (the walk, or its fallback) give the same columns, or error, as the parsed values. */
function expectSameAsParsed(resource: Resource, itemTexts: readonly string[], metadataColumns: readonly string[] = []) {
  const walked = build(resource, metadataColumns, (builder) => builder.add(scannedPage(itemTexts)));
  const parsed = build(resource, metadataColumns, (builder) => {
    for (const text of itemTexts) builder.addOne(JSON.parse(text));
  });
  expect(walked).toEqual(parsed);
}

/** Whether the walk itself takes this item (not its fallback). */
function walks(resource: Resource, text: string, metadataColumns: readonly string[] = []): boolean {
  const specs = streamColumns(resourceSpec(resource).columns, metadataColumns).filter((s) => s.name !== EXTRA_COLUMN);
  const walk = new ItemWalk(specs, specs.map((spec) => newColumn(spec.kind, 4)), new Utf8Column(4));
  return walk.add(Buffer.from(text), 0, Buffer.byteLength(text));
}

const counts = { assets: 50, events: 50, timeseries: 50, files: 50, sequences: 20, relationships: 50 };
const dataset = createDataset({ seed: 7, ...counts });
const simulated = (resource: Resource) =>
  Array.from({ length: 40 }, (_, i) => JSON.stringify(dataset[resource].item(i)));

describe('ItemWalk', () => {
  it.each(RESOURCES)('reads simulated %s into the same columns as JSON.parse does', (resource) => {
    const items = simulated(resource);
    expectSameAsParsed(resource, items);
    expectSameAsParsed(resource, items, ['site', 'ключ', 'absent']);
  });

  it('takes the plain items itself: every simulated item of the six collections but sequences', () => {
    for (const resource of RESOURCES) {
      const taken = simulated(resource).filter((text) => walks(resource, text)).length;
      expect({ resource, taken }).toEqual({ resource, taken: resource === 'sequences' ? 0 : 40 });
    }
  });

  it('leaves to JSON.parse what is not the plain case, and nothing it left changes the columns', () => {
    const cases = [
      '{"id":1,"externalId":"a","externalId":"b"}',
      '{"id":1,"ext\\u0065rnalId":"a"}',
      '{"id":1.0}',
      '{"id":1e3}',
      '{"id":9007199254740992}',
      '{"id":12345678901234567}',
      '{"id":1,"metadata":{"2":"b","a":"x","1":"c"}}',
      '{"id":1,"metadata":{"a":"x","a":"y"}}',
      '{"id":1,"metadata":{"\\u0061":"x","a":"y"}}',
      '{"id":1,"metadata":{"a":"x","\\u0061":"y"}}',
      '{"id":1,"metadata":{"\\u0031":"x"}}',
      '{"id":1,"metadata":{"a":1}}',
      '{"id":1,"metadata":{"a":null}}',
      '{"id":1,"metadata":[]}',
      '{"id":1,"assetIds":[1,"2"]}',
      '{"id":1,"assetIds":[1,2.5]}',
      '{"id":1,"startTime":"2020-01-01"}',
      '{"id":"1"}',
      '{"externalId":"no id"}',
      '{"id":null}',
      '[1]',
      '"text"',
    ];
    for (const text of cases) {
      expect({ text, walks: walks('events', text) }).toEqual({ text, walks: false });
      expectSameAsParsed('events', [text, '{"id":2}']);
    }
  });

  it('reads escapes, Unicode, nulls, empty values, negative numbers, doubles and booleans as JSON.parse does', () => {
    const events = [
      '{ "id" : -42 , "externalId" : "a\\"b\\\\c\\u00e9\\n" , "description" : "ünïcødé ✓ 温度 🙂", "metadata" : { } }',
      '{"id":9007199254740991,"startTime":-1,"endTime":0,"assetIds":[],"metadata":{"k":"","é":"\\t"},"source":""}',
      '{"id":3,"assetIds":[1,null,-3],"metadata":null,"description":null,"dataSetId":null}',
      '{"id":4}',
      '{"id":5,"labels":[{"externalId":"x"}],"2":{"b" : 1.50},"1":null,"labels":"again","__proto__":{"a":1},"metadata_k":"v"}',
      '{"id":7,"metadata":{"key with \\"quotes\\"":"v","k":"\\u00e9"}}',
      '{"id":6,"unknown":"\u00e9\ud83d\ude00","empty":{},"list":[ ],"n":-1.5e-3,"t":true}',
    ];
    for (const text of events) expect({ text, walks: walks('events', text) }).toEqual({ text, walks: true });
    expectSameAsParsed('events', events);
    expectSameAsParsed('events', events, ['k', 'é', 'missing', 'key with "quotes"']);
    const relationships = ['{"externalId":"r","confidence":0.25}', '{"externalId":"s","confidence":1e-7}', '{"externalId":"t","confidence":-3}'];
    expectSameAsParsed('relationships', relationships);
    const timeseries = ['{"id":1,"valueType":"DOUBLE","isString":false,"isStep":true}', '{"id":2,"valueType":"STRING","isString":null}'];
    expectSameAsParsed('timeseries', timeseries);
    expect(timeseries.every((text) => walks('timeseries', text))).toBe(true);
  });

  it('reads labels ([{externalId}]) from their bytes, escapes and spaces included; any other shape is left to JSON.parse', () => {
    const plain = [
      '{"id":1,"labels":[{"externalId":"pump"},{ "externalId" : "a\\"b\\u00e9" }]}',
      '{"id":2,"labels":[ ]}',
      '{"id":3,"labels":null}',
      '{"id":4}',
    ];
    for (const text of plain) expect({ text, walks: walks('assets', text) }).toEqual({ text, walks: true });
    expectSameAsParsed('assets', plain);
    const other = [
      '{"id":1,"labels":[{"externalId":"a","color":"red"}]}',
      '{"id":1,"labels":[{"ext\\u0065rnalId":"a"}]}',
      '{"id":1,"labels":[{"externalId":1}]}',
      '{"id":1,"labels":["pump"]}',
      '{"id":1,"labels":[{}]}',
      '{"id":1,"labels":{"externalId":"a"}}',
    ];
    for (const text of other) {
      expect({ text, walks: walks('assets', text) }).toEqual({ text, walks: false });
      expectSameAsParsed('assets', [text, '{"id":2}']);
    }
  });

  it('keeps a field named __proto__ in extra, read from bytes or parsed', () => {
    const text = '{"id":1,"__proto__":{"a":1},"other":2}';
    const ways = [
      (builder: RowGroupBuilder) => builder.add(scannedPage([text])),
      (builder: RowGroupBuilder) => builder.addOne(JSON.parse(text)),
    ];
    for (const add of ways) {
      const builder = new RowGroupBuilder('events', 4);
      add(builder);
      expect(builder.batch().getChild('extra')?.get(0)).toBe('{"__proto__":{"a":1},"other":2}');
    }
  });

  it('agrees with JSON.parse on random items, plain or not (fast-check)', () => {
    const text = fc.string({ unit: 'binary', maxLength: 12 });
    const integer = fc.oneof(fc.integer(), fc.maxSafeInteger(), fc.constant(-0));
    const double = fc.double({ noNaN: true, noDefaultInfinity: true });
    const anyValue = fc.oneof(fc.jsonValue({ maxDepth: 2 }), integer, text, double);
    const event = fc.record(
      {
        id: fc.oneof(fc.maxSafeInteger(), anyValue),
        externalId: fc.oneof(text, anyValue),
        description: fc.oneof(text, fc.constant(null)),
        startTime: fc.oneof(integer, fc.constant(null), anyValue),
        assetIds: fc.oneof(fc.array(fc.oneof(integer, fc.constant(null)), { maxLength: 4 }), anyValue),
        metadata: fc.oneof(
          fc.dictionary(text, text, { maxKeys: 4 }),
          fc.dictionary(text, anyValue, { maxKeys: 2 }),
          anyValue,
        ),
        unknown: anyValue,
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.array(event, { minLength: 1, maxLength: 4 }), fc.constantFrom(undefined, 1), (items, indent) => {
        const texts = items.map((item) => JSON.stringify(item, null, indent));
        expectSameAsParsed('events', texts, ['a', '']);
      }),
      { numRuns: 400 },
    );
  });
});
