/**
 * Failpoints for crash tests (the technique of etcd's gofail): with
 * `BULK_EXTRACT_CRASH_AT=<point>:<n>`, the process kills itself with SIGKILL the n-th time it
 * reaches `<point>`, so a test can stop it exactly between two steps of a commit. Unset (always, in
 * normal use), a call is one comparison.
 */
const spec = parse(process.env.BULK_EXTRACT_CRASH_AT);
let hits = 0;

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
  'after-upload-part';

export function crashPoint(point: CrashPoint): void {
  if (spec !== undefined && spec.point === point && ++hits === spec.count) process.kill(process.pid, 'SIGKILL');
}

const writeFault = parse(process.env.BULK_EXTRACT_FAIL_WRITE);
let writes = 0;

/**
 * Disk-fault injection for tests: with `BULK_EXTRACT_FAIL_WRITE=<CODE>:<n>` (CODE such as ENOSPC
 * or EIO), the n-th file write of the process fails with that error code, as a full disk would.
 */
export function injectedWriteError(path: string): NodeJS.ErrnoException | undefined {
  if (writeFault === undefined || ++writes !== writeFault.count) return undefined;
  const code = writeFault.point.toUpperCase();
  return Object.assign(new Error(`${code}: injected write error, write '${path}'`), { code, syscall: 'write', path });
}

function parse(value: string | undefined): { point: string; count: number } | undefined {
  const match = /^([a-zA-Z-]+):(\d+)$/.exec(value ?? '');
  return match?.[1] === undefined ? undefined : { point: match[1], count: Number(match[2]) };
}
