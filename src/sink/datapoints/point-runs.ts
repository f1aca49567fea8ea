import { type FileHandle, open, rm } from 'node:fs/promises';
import { OutputError } from '../../errors.js';
import { injectedWriteError } from '../../util/crash-point.js';
import { outputError } from '../../util/durable-file.js';
import type { PointTable } from './point-table.js';
import { RowBlock, type ValueKind } from './row-block.js';

/** Rows of a block of a run at most: 4096 for the largest runs. */
const MAX_BLOCK_ROWS = 4096;

/** Rows of a block of a run of `runRows`, a 32nd of it: a merge holds one block of each run at a time. */
export function blockRowsFor(runRows: number): number {
  return Math.min(MAX_BLOCK_ROWS, Math.ceil(runRows / 32));
}

/**
 * The sorted runs of one datapoints shard, in one scratch file beside it: each run is the rows a
 * PointTable held, written sorted (by series, then time) as RowBlocks of `blockRowsFor(runRows)`
 * rows. The file is created here, exclusively: a file or link already at its name is refused and
 * left as it is, so this never writes to, reads or removes anything it did not create. It is never
 * fsynced (a crash leaves a leftover that a resume removes, like the spill file's).
 */
export class PointRuns {
  private size = 0;
  /** Per run, where each of its blocks starts, then where its last one ends. */
  private readonly runs: number[][] = [];

  private constructor(
    readonly path: string,
    private handle: FileHandle | undefined,
  ) {}

  static async create(path: string): Promise<PointRuns> {
    try {
      return new PointRuns(path, await open(path, 'wx+'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw outputError('Creating', path, error);
      throw new OutputError(
        `Creating ${path} failed (EEXIST: a file or link is already there, which this shard's writer did not ` +
        'create; it is left as it is). Shards committed before this and the checkpoint are intact; move it away ' +
        'and run again to resume.',
        { cause: error },
      );
    }
  }

  /** Runs written. */
  get count(): number {
    return this.runs.length;
  }

  /** Bytes written. */
  get bytes(): number {
    return this.size;
  }

  /** Writes the rows `table` holds as one more run, sorted, gathered in `block` (room for a block's rows). */
  async write(table: PointTable, block: RowBlock, blockRows: number): Promise<void> {
    const order = table.order();
    const starts = [this.size];
    for (let from = 0; from < order.length; from += blockRows) {
      table.gather(order, from, Math.min(order.length, from + blockRows), block);
      await this.append(block.serialized());
      starts.push(this.size);
    }
    this.runs.push(starts);
  }

  /** A cursor at the start of each run, its columns of `kinds`. */
  cursors(kinds: readonly ValueKind[]): RunCursor[] {
    return this.runs.map((starts) => new RunCursor(this, starts, kinds));
  }

  /** Fills `buffer` from `position` on. */
  async read(buffer: Uint8Array, position: number): Promise<void> {
    try {
      const handle = this.opened();
      for (let done = 0; done < buffer.length;) {
        const { bytesRead } = await handle.read(buffer, done, buffer.length - done, position + done);
        if (bytesRead === 0) throw new Error(`the file ends at byte ${position + done}, before the run's block does`);
        done += bytesRead;
      }
    } catch (error) {
      throw outputError('Reading', this.path, error);
    }
  }

  /** Closes and deletes the file (this writer's own); safe to call again. */
  async remove(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    if (handle === undefined) return;
    await handle.close().catch(() => undefined);
    await rm(this.path, { force: true });
  }

  private async append(buffers: Uint8Array[]): Promise<void> {
    const total = buffers.reduce((sum, buffer) => sum + buffer.length, 0);
    try {
      const injected = injectedWriteError(this.path);
      if (injected !== undefined) throw injected;
      const handle = this.opened();
      const { bytesWritten } = await handle.writev(buffers, this.size);
      if (bytesWritten < total) {
        // A filling disk may take less than asked: the rest from one buffer, as SpillFile does.
        const whole = Buffer.concat(buffers);
        for (let offset = bytesWritten; offset < total;) {
          offset += (await handle.write(whole, offset, total - offset, this.size + offset)).bytesWritten;
        }
      }
      this.size += total;
    } catch (error) {
      throw outputError('Writing', this.path, error);
    }
  }

  private opened(): FileHandle {
    if (this.handle === undefined) throw new Error('the runs file is closed');
    return this.handle;
  }
}

/** Reads one run of a PointRuns block by block: `block` is the one read last, `pos` the next row of it. */
export class RunCursor {
  block: RowBlock | undefined;
  pos = 0;
  private next = 0;
  private buffer = new Uint8Array(0);

  constructor(
    private readonly file: PointRuns,
    private readonly starts: readonly number[],
    private readonly kinds: readonly ValueKind[],
  ) {}

  /** Reads the run's next block into the cursor's buffer (the block before is then gone); false at the run's end. */
  async advance(): Promise<boolean> {
    if (this.next >= this.starts.length - 1) {
      this.block = undefined;
      return false;
    }
    const at = this.starts[this.next]!;
    const length = this.starts[this.next + 1]! - at;
    this.next++;
    if (length > this.buffer.length) this.buffer = new Uint8Array(Math.max(length, this.buffer.length * 2));
    const bytes = this.buffer.subarray(0, length);
    await this.file.read(bytes, at);
    this.block = RowBlock.read(this.kinds, bytes);
    this.pos = 0;
    return true;
  }
}
