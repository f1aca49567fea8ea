import { isAzureUrl } from '../util/output-url.js';

/**
 * An output named on the command line without a job file (`status --out`, `verify DIR`): a folder
 * only. A bucket or container is read with the job's `output.s3` or `output.azure` settings, so an
 * s3:// or Azure URL there is refused with a message that says to give the job file instead.
 */

/** Whether the output named on the command line is object storage (s3://..., an Azure URL), not a folder. */
export function isBucketUrl(dir: string): boolean {
  return /^s3:\/\//i.test(dir) || isAzureUrl(dir);
}

/** The refusal of object storage named without --config (a URL with "@" or "?" may hold credentials: not repeated). */
export function needsConfig(command: 'status' | 'verify', dir: string): string {
  const azure = isAzureUrl(dir);
  const shown = dir.includes('@') || dir.includes('?') ? (azure ? 'an Azure URL' : 'an s3:// URL') : dir;
  const named = command === 'status' ? `--out ${shown}` : shown;
  const fix = command === 'status' ? ' (add --out to read another prefix than its output.dir)' : '';
  const settings = azure
    ? 'a container, read with the job\'s output.azure settings (account, endpoint)'
    : 'a bucket, read with the job\'s output.s3 settings (endpoint, region, credentials)';
  return `${named} is ${settings}: run bulk-extract ${command} --config FILE${fix}.`;
}
