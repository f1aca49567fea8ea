import { once } from 'node:events';
import { createGzip, type Gzip } from 'node:zlib';
import { DurableFile } from '../util/durable-file.js';
import { PageItems } from '../page/index.js';
import type { CommittedShard, ShardWriter } from './shard-writer.js';

/**
 * NDJSON, one item per line exactly as the platform sent it (every field kept), plain or gzip.
 * gzip runs on zlib's thread pool; its output is written as it comes, with backpressure.
 */
export class NdjsonWriter implements ShardWriter {
  readonly format = 'ndjson';
  private count = 0;
  private readonly gzip: Gzip | undefined;
  private pending: Promise<void> = Promise.resolve();
  private failure: Error | undefined;

  private constructor(
    private readonly file: DurableFile,
    gzip: boolean,
  ) {
    if (gzip) {
      this.gzip = createGzip({ level: 6 });
      this.gzip.on('data', (chunk: Buffer) => {
        this.pending = this.pending.then(() => this.file.write(chunk)).catch((error: unknown) => {
          this.failure ??= error instanceof Error ? error : new Error(String(error));
        });
      });
    }
  }

  static async create(path: string, gzip: boolean): Promise<NdjsonWriter> {
    return new NdjsonWriter(await DurableFile.create(path), gzip);
  }

  get rows(): number {
    return this.count;
  }

  get bytes(): number {
    return this.file.bytes;
  }

  async append(items: PageItems | readonly unknown[]): Promise<void> {
    if (items.length === 0) return;
    return this.appendLines(PageItems.from(items).lines(), items.length);
  }

  /**
   * `count` lines already made, each ending in a line break. `bytes` is free for other use once
   * this resolves: written to the file, or taken in by gzip.
   */
  async appendLines(bytes: Uint8Array, count: number): Promise<void> {
    const { gzip } = this;
    this.count += count;
    if (gzip === undefined) return this.file.write(bytes);
    // Called once gzip has read the whole chunk, which is sooner than its output is written.
    await new Promise<void>((resolve, reject) => gzip.write(bytes, (error) => (error ? reject(error) : resolve())));
    await this.pending;
    if (this.failure !== undefined) throw this.failure;
  }

  async commit(): Promise<CommittedShard> {
    if (this.gzip !== undefined) {
      this.gzip.end();
      await once(this.gzip, 'end');
      await this.pending;
      if (this.failure !== undefined) throw this.failure;
    }
    const done = await this.file.commit();
    return { ...done, format: 'ndjson', rows: this.count };
  }

  async abort(): Promise<void> {
    this.gzip?.destroy();
    await this.file.abort();
  }
}
