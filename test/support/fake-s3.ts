import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A read-only S3 endpoint on loopback that serves objects from memory under any key, `..` and all
 * (such keys are legal on AWS): ListObjectsV2, HeadObject and GetObject of one bucket, path-style.
 * For tests of what a reader does with keys a bucket may hold; s3rver keeps objects as files, so
 * it cannot hold them safely.
 */
export interface FakeS3 {
  endpoint: string;
  bucket: string;
  /** Keys requested with GetObject, in order. */
  gets: string[];
  close(): Promise<void>;
}

export async function startFakeS3(objects: ReadonlyMap<string, Buffer>, bucket = 'fake'): Promise<FakeS3> {
  const gets: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    // The raw path: URL would resolve `..` away, and the key is what follows `/<bucket>/` as sent.
    const rawPath = (req.url ?? '/').split('?')[0] ?? '/';
    if (!rawPath.startsWith(`/${bucket}`)) return reply(res, 404, error('NoSuchBucket'));
    const key = decodeURIComponent(rawPath.slice(bucket.length + 2));
    if (key === '' && url.searchParams.get('list-type') === '2') {
      const prefix = url.searchParams.get('prefix') ?? '';
      const keys = [...objects.keys()].filter((k) => k.startsWith(prefix)).sort();
      const contents = keys
        .map((k) => `<Contents><Key>${xml(k)}</Key><LastModified>2026-11-26T00:00:00.000Z</LastModified><ETag>"0"</ETag><Size>${objects.get(k)?.length ?? 0}</Size><StorageClass>STANDARD</StorageClass></Contents>`)
        .join('');
      return reply(
        res,
        200,
        `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${bucket}</Name><Prefix>${xml(prefix)}</Prefix><KeyCount>${keys.length}</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>${contents}</ListBucketResult>`,
      );
    }
    const body = objects.get(key);
    if (body === undefined) return reply(res, 404, req.method === 'HEAD' ? '' : error('NoSuchKey'));
    if (req.method === 'GET') gets.push(key);
    res.writeHead(200, { 'content-length': String(body.length), 'content-type': 'application/octet-stream', 'etag': '"0"' });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    gets,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function reply(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/xml', 'content-length': String(Buffer.byteLength(body)) });
  res.end(body);
}

function error(code: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code}</Message></Error>`;
}

function xml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}
