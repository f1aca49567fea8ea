/**
 * An output named on the command line without a job file (`status --out`, `verify DIR`): a folder
 * only. A bucket is read with the job's `output.s3` settings (endpoint, region, credentials), so an
 * s3:// URL there is refused with a message that says to give the job file instead.
 */

/** Whether the output named on the command line is a bucket prefix (s3://...), not a folder. */
export function isBucketUrl(dir: string): boolean {
  return /^s3:\/\//i.test(dir);
}

/** The refusal of an s3:// output named without --config (a URL with "@" may hold credentials: not repeated). */
export function needsConfig(command: 'status' | 'verify', dir: string): string {
  const shown = dir.includes('@') ? 'an s3:// URL' : dir;
  const named = command === 'status' ? `--out ${shown}` : shown;
  const fix = command === 'status' ? ' (add --out to read another prefix than its output.dir)' : '';
  return `${named} is a bucket, read with the job's output.s3 settings (endpoint, region, credentials): run bulk-extract ${command} --config FILE${fix}.`;
}
