import { ConfigError } from '../errors.js';

/** Splits `s3://bucket/some/prefix` (the prefix may be empty; no leading or trailing '/'). */
export function parseS3Url(url: string): { bucket: string; prefix: string } {
  // An '@' may be the start of credentials pasted into the URL: never repeat such a value.
  const shown = url.includes('@') ? 'a value with "@"' : JSON.stringify(url);
  const fail = (why: string) =>
    new ConfigError(`output.dir must be s3://bucket or s3://bucket/prefix (${why}); got ${shown}.`);
  const match = /^s3:\/\/([^/]*)(.*)$/.exec(url);
  if (match === null) throw fail('it must start with s3://');
  const [, bucket = '', rest = ''] = match;
  if (/[?#]/.test(url)) throw fail('no query string or fragment');
  if (bucket === '') throw fail('the bucket name is empty');
  const badBucket = bucketNameProblem(bucket);
  if (badBucket !== undefined) throw fail(`bucket name: ${badBucket}`);
  const prefix = rest.replace(/^\/+|\/+$/g, '');
  const segments = prefix === '' ? [] : prefix.split('/');
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..')) {
    throw fail('the prefix has an empty, "." or ".." segment');
  }
  return { bucket, prefix };
}

/** What breaks the S3 bucket naming rules, or undefined. */
function bucketNameProblem(name: string): string | undefined {
  if (name.length < 3 || name.length > 63) return '3 to 63 characters';
  if (!/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/.test(name)) {
    return 'lowercase letters, digits, "." and "-", starting and ending with a letter or digit';
  }
  if (name.includes('..')) return 'no two adjacent periods';
  if (/^\d+\.\d+\.\d+\.\d+$/.test(name)) return 'not an IP address';
  if (/^(xn--|sthree-|amzn-s3-demo-)/.test(name) || /(-s3alias|--ol-s3|\.mrap|--x-s3|--table-s3)$/.test(name)) {
    return 'a prefix or suffix reserved by S3';
  }
  return undefined;
}
