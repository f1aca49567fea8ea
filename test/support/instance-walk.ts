import { type RecordBatch, Table, tableToIPC, Vector } from 'apache-arrow';
import { PageItems, scanPage } from '../../src/page/index.js';
import type { InstanceColumn, InstanceType, ViewDefinition, ViewRef } from '../../src/resources/index.js';
import { instanceColumns } from '../../src/resources/index.js';
import { InstanceRowBuilder } from '../../src/sink/instances/instance-rows.js';

/**
 * Builds the same instances through InstanceRowBuilder twice, the walk on and forced off, for the
 * tests of InstanceWalk: the rows must be the same either way, and so must an error.
 */

/** A list page of these instance texts, as the platform serves it, scanned as the export scans it. */
export function scannedPage(texts: readonly string[]): PageItems {
  const body = Buffer.from(`{"items":[${texts.join(',')}],"nextCursor":"c"}`);
  const scan = scanPage(body);
  if (scan === undefined) throw new Error('the test page does not scan');
  return PageItems.scanned(body, scan);
}

export interface Built {
  /** Per row, per column: the value Arrow reads back (BigInt as text `<digits>n`). */
  rows?: unknown[][];
  /** The batch as Arrow IPC bytes, base64: every buffer, not only the values. */
  ipc?: string;
  /** The message of the error adding the page threw. */
  error?: string;
  batch?: RecordBatch;
}

/** The page through a builder, the walk on or off; `walked`: the rows the walk read. */
export function build(
  view: ViewRef,
  specs: readonly InstanceColumn[],
  page: PageItems,
  walk: boolean,
): { built: Built; walked: number } {
  const builder = new InstanceRowBuilder(view, specs, 4, { walk });
  try {
    builder.add(page);
  } catch (error) {
    return { built: { error: (error as Error).message }, walked: builder.walked };
  }
  const batch = builder.batch();
  const ipc = Buffer.from(tableToIPC(new Table([batch]), 'stream')).toString('base64');
  return { built: { rows: rowsOf(batch), ipc, batch }, walked: builder.walked };
}

/** Both ways: what each gives (without the batches), and how many instances the walk took. */
export function bothWays(view: ViewRef, specs: readonly InstanceColumn[], page: PageItems) {
  const { built: walked, walked: taken } = build(view, specs, page, true);
  const { built: parsed } = build(view, specs, page, false);
  const { batch: _w, ...walkedPlain } = walked;
  const { batch: _p, ...parsedPlain } = parsed;
  return { walked: walkedPlain, parsed: parsedPlain, taken, batches: [walked.batch, parsed.batch] };
}

/** Whether the walk takes this one instance itself (not its fallback). */
export function walks(view: ViewRef, specs: readonly InstanceColumn[], text: string): boolean {
  return build(view, specs, scannedPage([text]), true).walked === 1;
}

export function rowsOf(batch: RecordBatch): unknown[][] {
  return Array.from({ length: batch.numRows }, (_, r) =>
    batch.schema.fields.map((_field, c) => plain(batch.getChildAt(c)!.get(r))));
}

/** An Arrow value as plain data a test can compare and print. */
function plain(value: unknown): unknown {
  if (typeof value === 'bigint') return `${value}n`;
  if (value instanceof Vector) return [...(value)].map(plain);
  if (value !== null && typeof value === 'object') {
    const json = (value as { toJSON?: () => Record<string, unknown> }).toJSON?.() ?? value;
    return Object.fromEntries(Object.entries(json).map(([key, item]) => [key, plain(item)]));
  }
  return value;
}

const CONTAINER = { space: 'test_space', externalId: 'Everything' };

/** A view property of a type, mapped to the container property of its name. */
function property(type: string, list = false) {
  return (name: string) => ({ container: CONTAINER, containerPropertyIdentifier: name, type: { type, list } });
}

/** Every property type the columns know, as a scalar and as a list; `type` (renamed), a connection, an untyped one. */
export const EVERY_KIND_VIEW: ViewDefinition = {
  space: 'test_space',
  externalId: 'Everything',
  version: 'v1',
  properties: Object.fromEntries([
    ...['text', 'int32', 'int64', 'float32', 'float64', 'boolean', 'timestamp', 'date', 'json', 'direct', 'enum'].flatMap(
      (type) => [[type, property(type)(type)], [`${type}s`, property(type, true)(`${type}s`)]],
    ),
    ['type', property('direct')('type')],
    ['linked', { source: { space: 'test_space', externalId: 'Other', version: 'v1' } }],
    ['shape', property('geometry')('shape')],
  ]) as ViewDefinition['properties'],
};

export const EVERY_KIND_REF: ViewRef = { space: 'test_space', externalId: 'Everything', version: 'v1' };

export function everyKindColumns(instanceType: InstanceType): InstanceColumn[] {
  return [...instanceColumns(EVERY_KIND_VIEW, instanceType).columns];
}
