import { type InstanceColumn, type ViewRef, viewSourceKey } from '../../resources/index.js';
import {
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  LOWER_N,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  sameBytes,
} from '../parquet/json-bytes.js';
import { KeyIndex } from './key-index.js';
import { ValueEntries } from './value-entries.js';
import { kindCode } from './value-kinds.js';

/** A column without a value: its key is absent. */
export const ABSENT = -1;
/** A column whose value is JSON null. */
export const NULL = -2;

const PROPERTIES = Buffer.from('properties');

/**
 * Where each value of one instance lies in its bytes, checked against its column: the first pass
 * of InstanceWalk. `read` answers false for anything that is not the plain case (InstanceWalk says
 * which), having found out before anything is written; each value becomes entries (ValueEntries).
 */
export class InstanceFields extends ValueEntries {
  /** Per column: ABSENT, NULL, or the index of its first entry. */
  readonly slots: Int32Array;
  /** Per list column: how many elements its list has. */
  readonly counts: Int32Array;
  /** Per column: its kind's code (value-kinds.ts), and whether it is a list. */
  readonly kinds: Uint8Array;
  readonly lists: Uint8Array;
  private readonly required: number[];
  private readonly fields: KeyIndex;
  private readonly properties: KeyIndex;
  private readonly space: Buffer;
  private readonly source: Buffer;

  constructor(view: ViewRef, specs: readonly InstanceColumn[]) {
    super();
    this.slots = new Int32Array(specs.length);
    this.counts = new Int32Array(specs.length);
    this.kinds = Uint8Array.from(specs, (spec) => kindCode(spec.kind));
    this.lists = Uint8Array.from(specs, (spec) => (spec.list ? 1 : 0));
    this.required = specs.flatMap((spec, c) => (spec.required ? [c] : []));
    this.fields = new KeyIndex(specs.map(({ from }) => ('field' in from ? from.field : undefined)));
    this.properties = new KeyIndex(specs.map(({ from }) => ('property' in from ? from.property : undefined)));
    this.space = Buffer.from(view.space);
    this.source = Buffer.from(viewSourceKey(view));
  }

  /** Reads the instance at [start, end) of `body`; false when it is not the plain case. */
  read(body: Buffer, start: number, end: number): boolean {
    this.b = body;
    this.pos = start;
    this.end = end;
    this.slots.fill(ABSENT);
    this.entryCount = 0;
    if (this.ws() !== OPEN_OBJECT) return false;
    this.pos++;
    let properties = false;
    for (let c = this.ws(); c !== CLOSE_OBJECT; c = this.next()) {
      const keyStart = this.pos + 1;
      if (this.string()) return false;
      const keyEnd = this.pos - 1;
      this.colon();
      if (keyEnd - keyStart === PROPERTIES.length && sameBytes(body, keyStart, PROPERTIES, 0, PROPERTIES.length)) {
        if (properties || !this.group()) return false;
        properties = true;
        continue;
      }
      const column = this.fields.find(body, keyStart, keyEnd);
      if (column < 0 || this.slots[column] !== ABSENT || !this.columnValue(column)) return false;
    }
    this.pos++;
    if (!properties || this.pos !== this.end) return false;
    for (const c of this.required) if (this.slots[c]! < 0) return false;
    return true;
  }

  /** A key at `pos` that is `key`, written without escapes; its colon skipped. */
  private keyIs(key: Buffer): boolean {
    if (this.b[this.pos] !== QUOTE) return false;
    const start = this.pos + 1;
    if (this.string()) return false;
    const length = this.pos - 1 - start;
    this.colon();
    return length === key.length && sameBytes(this.b, start, key, 0, length);
  }

  /** `properties`: `{space: {"view/version": {...}}}`, the view's group and nothing else. */
  private group(): boolean {
    const { b } = this;
    if (b[this.pos] !== OPEN_OBJECT) return false;
    this.pos++;
    this.ws();
    if (!this.keyIs(this.space) || b[this.pos] !== OPEN_OBJECT) return false;
    this.pos++;
    this.ws();
    if (!this.keyIs(this.source) || b[this.pos] !== OPEN_OBJECT) return false;
    this.pos++;
    for (let c = this.ws(); c !== CLOSE_OBJECT; c = this.next()) {
      const keyStart = this.pos + 1;
      if (this.string()) return false;
      const keyEnd = this.pos - 1;
      this.colon();
      const column = this.properties.find(b, keyStart, keyEnd);
      if (column < 0 || this.slots[column] !== ABSENT || !this.columnValue(column)) return false;
    }
    this.pos++;
    for (let level = 0; level < 2; level++) {
      if (this.ws() !== CLOSE_OBJECT) return false;
      this.pos++;
    }
    return true;
  }

  /** The value of column `c` at `pos`: its entries, when the column holds it. */
  private columnValue(c: number): boolean {
    const { b } = this;
    const first = b[this.pos];
    if (first === LOWER_N) {
      this.pos += 4;
      this.slots[c] = NULL;
      return true;
    }
    const at = this.entryCount;
    const kind = this.kinds[c]!;
    if (this.lists[c] === 1) {
      if (first !== OPEN_ARRAY) return false;
      this.pos++;
      let count = 0;
      for (let e = this.ws(); e !== CLOSE_ARRAY; e = this.next()) {
        if (e === LOWER_N || !this.scalar(kind)) return false;
        count++;
      }
      this.pos++;
      this.counts[c] = count;
    } else if (!this.scalar(kind)) {
      return false;
    }
    this.slots[c] = at;
    return true;
  }
}
