import { appendFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KeyValue } from './verify-shard.js';

/** Keys held in memory at once: in the one set of a small stream, or per bucket of a large one. */
export const BUCKET_KEYS = 500_000;
/** Buckets a stream moves to when it turns out far larger than it said: up to 64 x BUCKET_KEYS keys stay bounded. */
const UNEXPECTED_BUCKETS = 64;
/** Keys gathered before they are appended to their buckets' files. */
const FLUSH_KEYS = 50_000;

/** What a key check found. */
export interface KeyReport {
  /** Rows whose key was read. */
  keys: number;
  /** Rows without a key (absent or of the wrong type). */
  missing: number;
  /** Rows whose key an earlier row has already: 0 when every key is unique. */
  repeated: number;
  /** A few repeated keys, with how often each appears. */
  examples: { key: string; count: number }[];
}

const EXAMPLES = 3;

/**
 * Checks that no key appears twice among the rows handed to `add`, in bounded memory: a stream of
 * up to BUCKET_KEYS rows is checked in one set; a larger one is split by a hash of the key into
 * buckets of about that many keys, each a temporary file, checked one at a time by `finish`. A
 * stream larger than `expectedRows` said moves to buckets once its set holds 2 x BUCKET_KEYS keys.
 */
export class KeyCheck {
  private keys = 0;
  private missing = 0;
  private repeated = 0;
  private readonly examples = new Map<string, number>();
  private seen = new Set<string>();
  private buckets: Buckets | undefined;

  /** `bucketKeys`: keys a bucket is sized for (tests make it small). */
  constructor(
    expectedRows: number,
    private readonly bucketKeys: number = BUCKET_KEYS,
  ) {
    if (expectedRows > bucketKeys) this.buckets = new Buckets(Math.ceil(expectedRows / bucketKeys));
  }

  add(value: KeyValue | undefined): void {
    if (value === undefined || value === '') {
      this.missing++;
      return;
    }
    this.keys++;
    const key = String(value);
    if (this.buckets !== undefined) {
      this.buckets.add(key);
      return;
    }
    this.check(this.seen, key);
    if (this.seen.size >= 2 * this.bucketKeys) {
      this.buckets = new Buckets(UNEXPECTED_BUCKETS);
      for (const held of this.seen) this.buckets.add(held);
      this.seen = new Set();
    }
  }

  /** Reads the buckets back (when there are any) and says what was found. */
  finish(): KeyReport {
    this.buckets?.each((keys) => {
      const seen = new Set<string>();
      for (const key of keys) this.check(seen, key);
    });
    const examples = [...this.examples].map(([key, count]) => ({ key, count }));
    return { keys: this.keys, missing: this.missing, repeated: this.repeated, examples };
  }

  /** Removes the buckets' files. */
  close(): Promise<void> {
    return this.buckets?.close() ?? Promise.resolve();
  }

  private check(seen: Set<string>, key: string): void {
    if (!seen.has(key)) {
      seen.add(key);
      return;
    }
    this.repeated++;
    const count = this.examples.get(key);
    if (count !== undefined) this.examples.set(key, count + 1);
    else if (this.examples.size < EXAMPLES) this.examples.set(key, 2);
  }
}

/** Keys split by a hash into files in a temporary folder, gathered in memory a few at a time. */
class Buckets {
  private readonly dir = mkdtempSync(join(tmpdir(), 'bulk-extract-keys-'));
  private readonly pending: string[][] = [];
  private gathered = 0;

  constructor(private readonly count: number) {
    for (let i = 0; i < count; i++) this.pending.push([]);
  }

  add(key: string): void {
    this.pending[bucketOf(key, this.count)]?.push(key);
    if (++this.gathered >= FLUSH_KEYS) this.flush();
  }

  /** Each bucket's keys, one bucket in memory at a time. */
  each(check: (keys: string[]) => void): void {
    this.flush();
    for (let bucket = 0; bucket < this.count; bucket++) {
      const text = readFileSync(this.file(bucket), { encoding: 'utf8', flag: 'a+' });
      check(text.split('\n').filter((key) => key !== ''));
    }
  }

  close(): Promise<void> {
    return rm(this.dir, { recursive: true, force: true });
  }

  private flush(): void {
    this.pending.forEach((keys, bucket) => {
      if (keys.length === 0) return;
      appendFileSync(this.file(bucket), `${keys.join('\n')}\n`);
      keys.length = 0;
    });
    this.gathered = 0;
  }

  private file(bucket: number): string {
    return join(this.dir, `bucket-${bucket}`);
  }
}

/** FNV-1a of the key, so that ids in a pattern (all even, say) still spread over the buckets. */
function bucketOf(key: string, buckets: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % buckets;
}
