import { type FileHandle, open, rm } from 'node:fs/promises';
import { createExclusive, outputError } from '../../util/durable-file.js';
import { injectedWriteError } from '../../util/crash-point.js';

/** Bytes of the length prefix in front of every record. */
const PREFIX = 4;

/**
 * A temp file of Arrow IPC stream records, each prefixed with its length (uint32, little endian).
 * Rows of an open Parquet shard wait here, on disk, instead of in memory: see ParquetShardWriter.
 * It is a scratch file (removed after the shard is encoded, or as a leftover on resume), so it is
 * never fsynced.
 */
export class SpillFile {
  private bytesWritten = 0;
  private constructor(
    readonly path: string,
    private handle: FileHandle | undefined,
  ) {}

  static async create(path: string): Promise<SpillFile> {
    try {
      return new SpillFile(path, await createExclusive(path));
    } catch (error) {
      throw outputError('Creating', path, error);
    }
  }

  get bytes(): number {
    return this.bytesWritten;
  }

  async append(record: Uint8Array): Promise<void> {
    const prefix = Buffer.alloc(PREFIX);
    prefix.writeUInt32LE(record.length);
    try {
      const injected = injectedWriteError(this.path);
      if (injected !== undefined) throw injected;
      if (this.handle === undefined) throw new Error('the spill file is closed');
      // writev may write less than asked (a filling disk): finish the rest, as DurableFile does.
      const total = PREFIX + record.length;
      const { bytesWritten } = await this.handle.writev([prefix, record]);
      if (bytesWritten < total) {
        // Rare: only then is the record copied, to write its rest from one buffer.
        const whole = Buffer.concat([prefix, record]);
        for (let offset = bytesWritten; offset < total;) {
          offset += (await this.handle.write(whole, offset, total - offset)).bytesWritten;
        }
      }
      this.bytesWritten += total;
    } catch (error) {
      throw outputError('Writing', this.path, error);
    }
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close();
  }

  async remove(): Promise<void> {
    await this.close().catch(() => undefined);
    await rm(this.path, { force: true });
  }
}

/**
 * Reads the records of a spill file in order, into one buffer reused from record to record: a
 * record is valid until the next one is asked for (the encoder copies each into wasm memory at
 * once), so reading a shard leaves no garbage of its size behind.
 */
export async function* readSpill(path: string): AsyncGenerator<Uint8Array> {
  const handle = await open(path, 'r');
  try {
    const prefix = Buffer.alloc(PREFIX);
    let buffer = new Uint8Array(0);
    let position = 0;
    for (;;) {
      const { bytesRead } = await handle.read(prefix, 0, PREFIX, position);
      if (bytesRead === 0) return;
      if (bytesRead < PREFIX) throw new Error(`${path}: truncated record header at byte ${position}`);
      const length = prefix.readUInt32LE(0);
      if (length > buffer.length) buffer = new Uint8Array(Math.max(length, buffer.length * 2));
      const record = buffer.subarray(0, length);
      const read = await handle.read(record, 0, length, position + PREFIX);
      if (read.bytesRead < length) throw new Error(`${path}: truncated record at byte ${position}`);
      position += PREFIX + length;
      yield record;
    }
  } finally {
    await handle.close();
  }
}
