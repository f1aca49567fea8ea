/**
 * Failpoints for crash tests (the technique of etcd's gofail): with
 * `BULK_EXTRACT_CRASH_AT=<point>:<n>`, the process kills itself with SIGKILL the n-th time it
 * reaches `<point>`, so a test can stop it exactly between two steps of a commit. With
 * `BULK_EXTRACT_FAIL_WRITE=<CODE>:<n>` (CODE such as ENOSPC or EIO), the n-th file write of the
 * process fails with that error code, as a full disk would. Unset (always, in normal use), a call
 * costs a comparison or two.
 */

export type CrashPoint =
  /** A page was appended to an open shard. */
  | 'after-append' |
  /** A shard's files were renamed into place; the manifest and checkpoint do not know them yet. */
  'after-shard-rename' |
  /** The manifest was replaced; the checkpoint was not. */
  'after-manifest-write' |
  /** The checkpoint was replaced. */
  'after-checkpoint-write' |
  /** A part of a multipart upload to object storage was sent; the upload is not complete. */
  'after-upload-part' |
  /** A piece of a Parquet file (a row group or the footer) was written; the file is not complete. */
  'after-encode-chunk' |
  /** A Delta table's run is sealed but for its version: the run's files are in no version yet. */
  'before-table-commit' |
  /** A put-if-absent file (a Delta commit) is written under its temporary name, not linked to its own. */
  'after-create-temp' |
  /** A Delta version was committed; its checkpoint, the cleanup and the run's `_SUCCESS` are not written. */
  'after-table-commit';

/** The live progress file of a run or a worker (state/live-progress.ts names them). */
const LIVE_PROGRESS = /\.progress\.json$/;

interface Trigger {
  /** A crash point, or an error code. */
  what: string;
  /** Fires on this hit (1 = the first). */
  count: number;
}

/** The failpoints of one process (or one test): what the environment asked for, and the hits so far. */
export class Failpoints {
  private readonly crashAt: Trigger | undefined;
  private readonly failWrite: Trigger | undefined;
  private hits = 0;
  private writes = 0;

  /**
   * Reads BULK_EXTRACT_CRASH_AT and BULK_EXTRACT_FAIL_WRITE from `env`, once. `kill` ends the
   * process at the crash point (SIGKILL to itself by default).
   */
  constructor(
    env: Readonly<Record<string, string | undefined>> = process.env,
    private readonly kill: () => void = () => process.kill(process.pid, 'SIGKILL'),
  ) {
    this.crashAt = parse(env.BULK_EXTRACT_CRASH_AT);
    this.failWrite = parse(env.BULK_EXTRACT_FAIL_WRITE);
  }

  /** Kills the process if this is the n-th time it reaches the point BULK_EXTRACT_CRASH_AT names. */
  reached(point: CrashPoint): void {
    if (this.crashAt !== undefined && this.crashAt.what === point && ++this.hits === this.crashAt.count) this.kill();
  }

  /**
   * The error the n-th file write must fail with, as BULK_EXTRACT_FAIL_WRITE asks; else undefined.
   * The live progress file is written on a timer and its failure only warns: its writes are not
   * counted, so that the n-th write is the same one in every run.
   */
  writeError(path: string): NodeJS.ErrnoException | undefined {
    if (this.failWrite === undefined || LIVE_PROGRESS.test(path)) return undefined;
    if (++this.writes !== this.failWrite.count) return undefined;
    const code = this.failWrite.what.toUpperCase();
    return Object.assign(new Error(`${code}: injected write error, write '${path}'`), { code, syscall: 'write', path });
  }
}

/** The process's failpoints, read from its environment on first use. */
let processFailpoints: Failpoints | undefined;

/** A crash point of the process (see Failpoints.reached). */
export function crashPoint(point: CrashPoint): void {
  (processFailpoints ??= new Failpoints()).reached(point);
}

/** The injected error of this file write of the process, if any (see Failpoints.writeError). */
export function injectedWriteError(path: string): NodeJS.ErrnoException | undefined {
  return (processFailpoints ??= new Failpoints()).writeError(path);
}

function parse(value: string | undefined): Trigger | undefined {
  const match = /^([a-zA-Z-]+):(\d+)$/.exec(value ?? '');
  return match?.[1] === undefined ? undefined : { what: match[1], count: Number(match[2]) };
}
