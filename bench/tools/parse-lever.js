#!/usr/bin/env node
// The parse lever for Parquet, measured on its own: how much CPU goes into turning events NDJSON
// into column values three ways, in one process, rounds interleaved (process.cpuUsage, medians):
//
// - parse:          JSON.parse of each item (what PageItems.value does), nothing else;
// - parse+columns:  the same, then the export's RowGroupBuilder (dist/) fills its Arrow columns;
// - bytes:          one walk over each item's bytes that takes the events fields straight into
//                   typed arrays and UTF-8 byte buffers, no objects and no strings; an item it does
//                   not take (an escape, a number that is not a plain integer, an unknown field)
//                   is counted as a fallback, which the real thing would parse as today.
//
// The `bytes` values are then checked against JSON.parse for every item (not timed).
//
//   node bench/tools/parse-lever.js FILE.ndjson [--rounds 3]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { RowGroupBuilder } from '../../dist/sink/collections/row-group.js';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { rounds: { type: 'string', default: '3' } } });
const body = readFileSync(positionals[0] ?? '');
const bounds = [];
for (let start = 0; start < body.length;) {
  const end = body.indexOf(0x0a, start);
  const stop = end === -1 ? body.length : end;
  if (stop > start) bounds.push(start, stop);
  start = stop + 1;
}
const rows = bounds.length / 2;
const GROUP = 10_000;

const Q = 0x22;
const BACKSLASH = 0x5c;
const KINDS = {
  id: 'int', externalId: 'str', type: 'str', subtype: 'str', description: 'str', startTime: 'int',
  endTime: 'int', assetIds: 'ints', source: 'str', dataSetId: 'int', metadata: 'map', createdTime: 'int',
  lastUpdatedTime: 'int',
};
const NAMES = Object.keys(KINDS);
const KEYS = NAMES.map((name) => Buffer.from(name, 'latin1'));

/** Column buffers of one row group: numbers in Float64Arrays (NaN for null), strings as UTF-8 bytes with offsets. */
function newColumns(capacity = GROUP) {
  return NAMES.map((name) => ({
    kind: KINDS[name],
    numbers: new Float64Array(capacity * (KINDS[name] === 'ints' ? 4 : 1)),
    bytes: new Uint8Array(capacity * 64),
    offsets: new Int32Array(capacity * 8 + 1),
    count: 0,
    end: 0,
  }));
}

/** Appends bytes [s, e) of the body to a column's byte buffer as one more value. */
function pushBytes(column, s, e) {
  pushFrom(column, body, s, e);
}

/** Appends bytes [s, e) of `source` (the body, or one encoded string) to a column's byte buffer as one value. */
function pushFrom(column, source, s, e) {
  const need = column.end + (e - s);
  if (need > column.bytes.length) {
    const bigger = new Uint8Array(need * 2);
    bigger.set(column.bytes);
    column.bytes = bigger;
  }
  if (column.count + 2 > column.offsets.length) {
    const bigger = new Int32Array(column.offsets.length * 2);
    bigger.set(column.offsets);
    column.offsets = bigger;
  }
  if (source === body) body.copy(column.bytes, column.end, s, e);
  else column.bytes.set(source, column.end);
  column.end = need;
  column.offsets[++column.count] = need;
}

function pushNumber(column, value) {
  if (column.count >= column.numbers.length) {
    const bigger = new Float64Array(column.numbers.length * 2);
    bigger.set(column.numbers);
    column.numbers = bigger;
  }
  column.numbers[column.count++] = value;
}

let at = 0;
const skip = () => {
  let c = body[at];
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = body[++at];
  return c;
};
/** Whether the last string stringEnd() found holds an escape. */
let escaped = false;
/** The end of the string whose opening quote is at `at` - 1 (escaped quotes skipped); -1 for none. */
function stringEnd() {
  escaped = false;
  for (let i = at; i < body.length; i++) {
    const c = body[i];
    if (c === Q) return i;
    if (c === BACKSLASH) {
      escaped = true;
      i++;
    }
  }
  return -1;
}
const textEncoder = new TextEncoder();
/** A string value [at, end) into the column: its bytes as they are, or decoded when it holds an escape. */
function pushString(column, end) {
  if (!escaped) {
    pushBytes(column, at, end);
    return;
  }
  const encoded = textEncoder.encode(JSON.parse(body.toString('utf8', at - 1, end + 1)));
  pushFrom(column, encoded, 0, encoded.length);
}
/** A plain integer (or null as NaN); undefined when it is anything else. */
function integer() {
  if (body[at] === 0x6e) {
    at += 4;
    return Number.NaN;
  }
  let negative = false;
  if (body[at] === 0x2d) {
    negative = true;
    at++;
  }
  let value = 0;
  const first = at;
  for (let c = body[at]; c >= 0x30 && c <= 0x39; c = body[++at]) value = value * 10 + (c - 0x30);
  const c = body[at];
  if (at === first || at - first > 16 || c === 0x2e || c === 0x65 || c === 0x45) return undefined;
  if (!Number.isSafeInteger(value)) return undefined;
  return negative ? -value : value;
}
function keyIndex(s, e) {
  const length = e - s;
  for (let k = 0; k < KEYS.length; k++) {
    const key = KEYS[k];
    if (key.length !== length || key[0] !== body[s]) continue;
    let same = true;
    for (let j = 1; j < length; j++) {
      if (key[j] !== body[s + j]) {
        same = false;
        break;
      }
    }
    if (same) return k;
  }
  return -1;
}

/** Walks item [s, e) into the columns; false when it must be parsed instead (a fallback). */
function walk(columns, s) {
  at = s;
  if (skip() !== 0x7b) return false;
  at++;
  const seen = new Int8Array(NAMES.length);
  for (;;) {
    let c = skip();
    if (c === 0x7d) break;
    if (c === 0x2c) {
      at++;
      c = skip();
    }
    if (c !== Q) return false;
    at++;
    const ke = stringEnd();
    if (ke < 0 || escaped) return false;
    const k = keyIndex(at, ke);
    if (k < 0) return false;
    at = ke + 1;
    if (skip() !== 0x3a) return false;
    at++;
    skip();
    const column = columns[k];
    seen[k] = 1;
    if (column.kind === 'int') {
      const value = integer();
      if (value === undefined) return false;
      pushNumber(column, value);
    } else if (column.kind === 'str') {
      if (body[at] !== Q) return false;
      at++;
      const end = stringEnd();
      if (end < 0) return false;
      pushString(column, end);
      at = end + 1;
    } else if (column.kind === 'ints') {
      if (body[at] !== 0x5b) return false;
      at++;
      for (let d = skip(); d !== 0x5d; d = skip()) {
        if (d === 0x2c) {
          at++;
          skip();
        }
        const value = integer();
        if (value === undefined) return false;
        pushNumber(column, value);
      }
      at++;
    } else {
      if (body[at] !== 0x7b) return false;
      at++;
      for (let d = skip(); d !== 0x7d; d = skip()) {
        if (d === 0x2c) {
          at++;
          skip();
        }
        if (body[at] !== Q) return false;
        at++;
        const keyEnd = stringEnd();
        if (keyEnd < 0) return false;
        pushString(column, keyEnd);
        at = keyEnd + 1;
        if (skip() !== 0x3a) return false;
        at++;
        if (skip() !== Q) return false;
        at++;
        const valueEnd = stringEnd();
        if (valueEnd < 0) return false;
        pushString(column, valueEnd);
        at = valueEnd + 1;
      }
      at++;
    }
  }
  for (let k = 0; k < NAMES.length; k++) {
    if (seen[k] === 0 && columns[k].kind !== 'map' && columns[k].kind !== 'ints') {
      if (columns[k].kind === 'int') pushNumber(columns[k], Number.NaN);
      else pushBytes(columns[k], 0, 0);
    }
  }
  return true;
}

const variants = {
  parse() {
    let n = 0;
    for (let r = 0; r < rows; r++) n += JSON.parse(body.toString('utf8', bounds[2 * r], bounds[2 * r + 1])).id > 0 ? 1 : 0;
    return n;
  },
  'parse+columns'() {
    const builder = new RowGroupBuilder('events', GROUP);
    for (let r = 0; r < rows; r++) {
      builder.addOne(JSON.parse(body.toString('utf8', bounds[2 * r], bounds[2 * r + 1])));
      if (builder.rows === GROUP) builder.reset();
    }
    return rows;
  },
  bytes() {
    let columns = newColumns();
    let fallbacks = 0;
    for (let r = 0; r < rows; r++) {
      if (!walk(columns, bounds[2 * r])) fallbacks++;
      if ((r + 1) % GROUP === 0) columns = newColumns();
    }
    return fallbacks;
  },
};

/** A map column's keys and values of one item, decoded. */
function mapOf(column, decoder) {
  const map = {};
  for (let i = 0; i < column.count; i += 2) {
    const key = decoder.decode(column.bytes.subarray(column.offsets[i], column.offsets[i + 1]));
    map[key] = decoder.decode(column.bytes.subarray(column.offsets[i + 1], column.offsets[i + 2]));
  }
  return map;
}

/** The bytes walk of every item against JSON.parse: the strings, numbers and maps it took. */
function check() {
  const decoder = new TextDecoder();
  let fallbacks = 0;
  for (let r = 0; r < rows; r++) {
    const columns = newColumns(1);
    if (!walk(columns, bounds[2 * r])) {
      fallbacks++;
      continue;
    }
    const item = JSON.parse(body.toString('utf8', bounds[2 * r], bounds[2 * r + 1]));
    for (let k = 0; k < NAMES.length; k++) {
      const name = NAMES[k];
      const column = columns[k];
      const expected = item[name];
      let got;
      if (column.kind === 'int') got = Number.isNaN(column.numbers[0]) ? undefined : column.numbers[0];
      else if (column.kind === 'str') got = expected === undefined ? undefined : decoder.decode(column.bytes.subarray(0, column.end));
      else if (column.kind === 'ints') got = expected === undefined ? undefined : [...column.numbers.subarray(0, column.count)];
      else got = expected === undefined ? undefined : mapOf(column, decoder);
      if (JSON.stringify(got) !== JSON.stringify(expected ?? undefined)) {
        throw new Error(`row ${r} field ${name}: ${JSON.stringify(got)} from the bytes, ${JSON.stringify(expected)} parsed`);
      }
    }
  }
  return fallbacks;
}

const samples = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
for (let round = 0; round < Number(values.rounds); round++) {
  for (const [name, run] of Object.entries(variants)) {
    const before = process.cpuUsage();
    run();
    const used = process.cpuUsage(before);
    samples[name].push((used.user + used.system) / 1e6);
  }
}
const fallbacks = check();
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const perMillion = (s) => (s * 1_000_000) / rows;
console.log(`${rows.toLocaleString('en-US')} events, ${values.rounds} rounds (medians), one process; fallbacks: ${fallbacks}`);
console.log('| Variant | CPU s per 1M rows |');
console.log('|---|---|');
for (const [name, list] of Object.entries(samples)) console.log(`| ${name} | ${perMillion(median(list)).toFixed(2)} |`);
