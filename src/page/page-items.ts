import { createHash } from 'node:crypto';
import type { ItemKeys, ScannedPage } from './page-scan.js';

const LF = 0x0a;
const COMMA = 0x2c;
const BACKSLASH = 0x5c;
const NEWLINE = Buffer.from('\n');

/** An item's `space` and `externalId`, as PageItems.key reads them. */
export interface ItemKey {
  space: string | undefined;
  externalId: string | undefined;
}

/**
 * The items of one page, as the writers take them: byte ranges of the body as received (a page
 * that scanPage read), or values (a page that needed JSON.parse, or items a caller built). Nothing
 * is parsed until a writer asks for a value, one item at a time, so a page's objects never all
 * live at once.
 */
export class PageItems {
  readonly length: number;

  private constructor(
    private readonly body: Buffer | undefined,
    private readonly bounds: readonly number[],
    private readonly values: readonly unknown[] | undefined,
    private readonly lineBreaks: boolean,
    /**
     * A number among the bytes may have more digits than an integer that is always safe: an item
     * parsed with JSON.parse may lose them (scanned pages; values given are as they are).
     */
    readonly longNumbers: boolean,
    /** Where each scanned item's `space` and `externalId` lie. */
    private readonly keys: ItemKeys = [],
  ) {
    this.length = values === undefined ? bounds.length / 2 : values.length;
  }

  /** The items scanPage found in `body`. The page owns `body`: lines() may rewrite its separators. */
  static scanned(body: Buffer, scan: Pick<ScannedPage, 'bounds' | 'lineBreaks' | 'longNumbers' | 'keys'>): PageItems {
    return new PageItems(body, scan.bounds, undefined, scan.lineBreaks, scan.longNumbers, scan.keys);
  }

  static of(values: readonly unknown[]): PageItems {
    return new PageItems(undefined, [], values, false, false);
  }

  /** Values as they are, or a page's items as they are. */
  static from(items: PageItems | readonly unknown[]): PageItems {
    return items instanceof PageItems ? items : PageItems.of(items);
  }

  /** Item `i`, parsed from its bytes (JSON.parse of that item alone), or as given. */
  value(i: number): unknown {
    if (this.values !== undefined) return this.values[i];
    const start = this.bounds[2 * i]!;
    return JSON.parse(this.body!.toString('utf8', start, this.bounds[2 * i + 1]));
  }

  /**
   * Where item `i` lies in the page's bytes as received: one JSON value, valid UTF-8. Undefined for
   * items given as values.
   */
  itemBytes(i: number): { body: Buffer; start: number; end: number } | undefined {
    const { body, bounds } = this;
    return body === undefined ? undefined : { body, start: bounds[2 * i]!, end: bounds[2 * i + 1]! };
  }

  /**
   * Item `i`'s `space` and `externalId` (an instance's key), each undefined where the item has no
   * such member holding a string: read from the offsets the scan noted, without parsing the item.
   */
  key(i: number): ItemKey {
    if (this.values !== undefined) {
      const item = this.values[i];
      const { space, externalId } = (item !== null && typeof item === 'object' ? item : {}) as Record<string, unknown>;
      return { space: typeof space === 'string' ? space : undefined, externalId: typeof externalId === 'string' ? externalId : undefined };
    }
    const { keys } = this;
    const at = 4 * i;
    return { space: this.text(keys[at]!, keys[at + 1]!), externalId: this.text(keys[at + 2]!, keys[at + 3]!) };
  }

  /** The string token at [start, end) of the body, quotes included, decoded; undefined for -1. */
  private text(start: number, end: number): string | undefined {
    if (start < 0) return undefined;
    const token = this.body!.subarray(start, end);
    return token.includes(BACKSLASH) ? (JSON.parse(token.toString('utf8')) as string) : token.toString('utf8', 1, token.length - 1);
  }

  /** Every item as a value (value(i) for each): for tests and small pages, not for the export's path. */
  toArray(): unknown[] {
    return Array.from({ length: this.length }, (_, i) => this.value(i));
  }

  /**
   * What tells this page from any other of its chain: its count and its first and last items, as
   * received (hashed). Two pages of a chain never share an item, so two equal fingerprints mean the
   * server sent one page twice. Empty for an empty page.
   */
  fingerprint(): string {
    if (this.length === 0) return '';
    const hash = createHash('sha1').update(String(this.length));
    for (const i of [0, this.length - 1]) {
      if (this.body === undefined) hash.update(`\n${JSON.stringify(this.values![i])}`);
      else hash.update('\n').update(this.body.subarray(this.bounds[2 * i], this.bounds[2 * i + 1]));
    }
    return hash.digest('hex');
  }

  /** The bytes of item `i` as received; undefined for items given as values. */
  bytesOf(i: number): number | undefined {
    return this.values === undefined ? this.bounds[2 * i + 1]! - this.bounds[2 * i]! : undefined;
  }

  /**
   * The items as NDJSON, one per line, each exactly as the server sent it (every byte kept: key
   * order, escapes, number forms); an item written across lines, or given as a value, is
   * JSON.stringify'd instead. For a compact page (items separated by a bare comma, the platform's
   * form) the lines are the body itself with those commas and the closing bracket turned into line
   * breaks: no copy.
   */
  lines(): Uint8Array {
    const { body, bounds } = this;
    if (this.length === 0) return new Uint8Array(0);
    if (body === undefined) {
      let text = '';
      for (const item of this.values!) text += `${JSON.stringify(item)}\n`;
      return Buffer.from(text);
    }
    if (!this.lineBreaks && this.compact()) {
      for (let k = 1; k < bounds.length; k += 2) body[bounds[k]!] = LF;
      return body.subarray(bounds[0], bounds.at(-1)! + 1);
    }
    const parts: Uint8Array[] = [];
    for (let i = 0; i < this.length; i++) {
      const item = body.subarray(this.bounds[2 * i], this.bounds[2 * i + 1]);
      const oneLine = !this.lineBreaks || (!item.includes(LF) && !item.includes(0x0d));
      parts.push(oneLine ? item : Buffer.from(JSON.stringify(this.value(i))), NEWLINE);
    }
    return Buffer.concat(parts);
  }

  /** Every two items are apart by one byte, a comma (or a line break this method already put there). */
  private compact(): boolean {
    const { body, bounds } = this;
    for (let k = 1; k < bounds.length - 1; k += 2) {
      const gap = bounds[k]!;
      if (bounds[k + 1] !== gap + 1 || (body![gap] !== COMMA && body![gap] !== LF)) return false;
    }
    return true;
  }
}
