import { isUtf8 } from 'node:buffer';
import { BAD, CLOSED } from './json-grammar.js';
import { equal, type ItemKeys, Scanner } from './page-scan.js';

/** What one pass over a sync answer's bytes finds of one result set (scanSyncPage). */
export interface ScannedSync {
  /** Start and end (exclusive) byte offsets of each instance of the result set, in pairs. */
  readonly bounds: readonly number[];
  /** Some instance holds a line break between its tokens. */
  readonly lineBreaks: boolean;
  /** Some number of the answer has a run of more than 15 digits (JsonGrammar.longDigits). */
  readonly longNumbers: boolean;
  /** Where each instance's `space` and `externalId` texts lie (ItemKeys). */
  readonly keys: ItemKeys;
  /** The result set's cursor in `nextCursor`; undefined when the answer has none for it. */
  readonly nextCursor: string | undefined;
}

/** The result set's instances as the scan found them. */
type FoundItems = Pick<ScannedSync, 'bounds' | 'lineBreaks' | 'keys'>;

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const ITEMS = Buffer.from('items');
const NEXT_CURSOR = Buffer.from('nextCursor');

/**
 * Scans an answer of `POST /models/instances/sync`, `{"items": {set: [...]}, "nextCursor": {set:
 * "..."}}`, for the result set `set`, in one pass over its bytes and as
 * scanPage does a list page: the grammar JSON.parse accepts is checked, and the byte range of every
 * instance of the set is found without building one object, so that an instance is parsed on its
 * own later (exactly, when it holds long numbers). Undefined whenever the answer is not the plain
 * case (not UTF-8 or not JSON, a key given twice or written with escapes, the set missing from
 * `items`, ...): the caller then parses it and names what is wrong. Other members (a `moreData`
 * from an older platform included) are checked as JSON and passed over.
 */
export function scanSyncPage(body: Uint8Array, set: string): ScannedSync | undefined {
  if (!isUtf8(body)) return undefined;
  return new SyncScanner(body, Buffer.from(set)).answer();
}

class SyncScanner extends Scanner {
  constructor(
    body: Uint8Array,
    private readonly set: Uint8Array,
  ) {
    super(body);
  }

  answer(): ScannedSync | undefined {
    let found: FoundItems | undefined;
    let nextCursor: string | undefined;
    let cursorSeen = false;
    const read = this.members((key) => {
      if (equal(key, ITEMS)) {
        if (found !== undefined) return false;
        found = this.itemsOfSet();
        return found !== undefined;
      }
      if (equal(key, NEXT_CURSOR)) {
        if (cursorSeen) return false;
        cursorSeen = true;
        const cursor = this.cursorOfSet();
        if (cursor === undefined) return false;
        nextCursor = cursor ?? undefined;
        return true;
      }
      return this.value();
    });
    if (!read || found === undefined) return undefined;
    this.ws();
    if (this.pos !== this.b.length) return undefined;
    return { ...found, nextCursor, longNumbers: this.longDigits };
  }

  /** `items`: an object holding the set's array once; its other sets are skipped. */
  private itemsOfSet(): FoundItems | undefined {
    let found: FoundItems | undefined;
    const read = this.members((key) => {
      if (!equal(key, this.set)) return this.value();
      if (found !== undefined || this.b[this.pos] !== OPEN_ARRAY) return false;
      const bounds: number[] = [];
      const keys: number[] = [];
      const lineBreaks = this.items(bounds, keys);
      if (lineBreaks === undefined) return false;
      found = { bounds, lineBreaks, keys };
      return true;
    });
    return read ? found : undefined;
  }

  /**
   * `nextCursor`: an object whose entry for the set, if any, is a non-empty string. Its value, null
   * when the set has no entry, undefined when the object is not plain.
   */
  private cursorOfSet(): string | null | undefined {
    let cursor: string | null = null;
    const read = this.members((key) => {
      if (!equal(key, this.set)) return this.value();
      if (cursor !== null) return false;
      const text = this.text();
      if (text === undefined || text === '') return false;
      cursor = text;
      return true;
    });
    return read ? cursor : undefined;
  }

  /**
   * The members of the object at `pos`, each handed to `member` with `pos` at its value (which it
   * reads, answering false when it refuses it). False when the object is not plain or is refused.
   */
  private members(member: (key: Uint8Array) => boolean): boolean {
    const { b } = this;
    this.ws();
    if (b[this.pos] !== OPEN_OBJECT) return false;
    this.pos++;
    this.ws();
    if (b[this.pos] === CLOSE_OBJECT) {
      this.pos++;
      return true;
    }
    this.depth++;
    for (;;) {
      const key = this.plainKey();
      if (key === undefined || !member(key)) return false;
      const next = this.separator(CLOSE_OBJECT);
      if (next === BAD) return false;
      if (next === CLOSED) break;
    }
    this.depth--;
    return true;
  }
}
