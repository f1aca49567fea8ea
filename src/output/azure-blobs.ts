import { stat, unlink } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { OutputError } from '../errors.js';
import { crashPoint } from '../util/crash-point.js';
import { withIdleTimeout } from '../util/idle-timeout.js';
import { type AzureStoreOptions, blockSizeFor, type Container, containerOf } from './azure-container.js';
import { errorCode, isAlreadyThere, isBlobAbsent, stalledAnswer } from './azure-errors.js';
import { sortedKeys, type StoreObjects } from './object-store.js';

/** The largest small text file (checkpoint, manifest, marker) read whole into memory: larger is refused unread. */
export const MAX_TEXT_BYTES = 512 * 1024 * 1024;
/** Deletes in flight at once (the Blob API deletes one blob a request). */
const DELETES_AT_ONCE = 8;

/** The blob operations of an Azure store; object-store.ts adds staging, the lock and the probe. */
export type AzureBlobs = StoreObjects & {
  /** The credential as messages name it (never its value), for --dry-run. */
  credential: string;
};

/** Blobs of a container prefix on Azure Blob Storage, ADLS Gen2 or OneLake (through the Blob API all three accept). */
export function createAzureBlobs(options: AzureStoreOptions): AzureBlobs {
  const at = containerOf(options);
  return {
    location: at.location,
    credential: at.credential,
    where: at.url,
    publishFile: (localPath, key) => publishFile(at, localPath, key),
    putText: (key, text) => putText(at, key, text),
    putTextIfAbsent: (key, text) => putTextIfAbsent(at, key, text),
    getText: (key) => getText(at, key),
    size: (key) => size(at, key),
    keys: (prefix) => listKeys(at, prefix),
    list: (prefix) => sortedKeys(listKeys(at, prefix)),
    remove: (keys) => removeKeys(at, keys),
    read: (key) => readBlob(at, key),
    close: () => Promise.resolve(),
  };
}

function contentType(key: string): string {
  return key.endsWith('.json') ? 'application/json' : 'text/plain; charset=utf-8';
}

/**
 * Uploads the finished local file to `key`, then deletes the local file. Up to `singleShot` bytes
 * in one Put Blob; past that its blocks are staged and committed with one Put Block List. Either
 * is atomic: readers see no blob, or the whole file (staged blocks stay invisible, and Azure
 * discards uncommitted blocks after a week).
 */
async function publishFile(at: Container, localPath: string, key: string): Promise<void> {
  const started = performance.now();
  let bytes: number;
  try {
    bytes = (await stat(localPath)).size;
  } catch (error) {
    throw new OutputError(`Publishing ${localPath} to ${at.url(key)} failed: cannot read the local file (${errorCode(error)}).`, { cause: error });
  }
  const blob = at.client.getBlockBlobClient(at.root + key);
  await at.request('upload', key, async () => {
    // An upload takes as long as its bytes need: it is bounded by a pause in its progress instead
    // of in whole (a server that stops reading, or stops mid-way through its answer).
    const idle = new AbortController();
    const timer = setTimeout(() => idle.abort(), at.timeoutMs);
    try {
      return await blob.uploadFile(localPath, {
        abortSignal: idle.signal,
        blockSize: blockSizeFor(at, bytes),
        concurrency: at.concurrency,
        maxSingleShotSize: at.singleShot,
        blobHTTPHeaders: { blobContentType: 'application/octet-stream' },
        onProgress: () => {
          timer.refresh();
          // Fires as blocks are sent: the blob is not committed yet (crash tests stop here).
          crashPoint('after-upload-part');
        },
      });
    } catch (error) {
      throw idle.signal.aborted ? stalledAnswer(at.timeoutMs) : error;
    } finally {
      clearTimeout(timer);
    }
  });
  try {
    await unlink(localPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new OutputError(`Published ${at.url(key)} but could not delete ${localPath} (${errorCode(error)}).`, { cause: error });
    }
  }
  at.log.debug({ key, bytes, blocks: bytes > at.singleShot, ms: Math.round(performance.now() - started) }, 'file published');
}

async function putText(at: Container, key: string, text: string): Promise<void> {
  const body = Buffer.from(text, 'utf8');
  const blob = at.client.getBlockBlobClient(at.root + key);
  await at.request('Put Blob', key, (abortSignal) => blob.upload(body, body.length, { abortSignal, blobHTTPHeaders: { blobContentType: contentType(key) } }));
}

async function putTextIfAbsent(at: Container, key: string, text: string): Promise<boolean> {
  const body = Buffer.from(text, 'utf8');
  const blob = at.client.getBlockBlobClient(at.root + key);
  return at.request('Put Blob', key, async (abortSignal) => {
    try {
      await blob.upload(body, body.length, { abortSignal, conditions: { ifNoneMatch: '*' }, blobHTTPHeaders: { blobContentType: contentType(key) } });
      return true;
    } catch (error) {
      // 409 BlobAlreadyExists (or 412): it exists; a retried create that had succeeded lands here too.
      if (isAlreadyThere(error)) return false;
      throw error;
    }
  });
}

async function getText(at: Container, key: string): Promise<string | undefined> {
  const blob = at.client.getBlobClient(at.root + key);
  return at.request('Get Blob', key, async () => {
    const answer = await ifPresent(blob.download());
    if (answer === undefined) return undefined;
    const tooLarge = (bytes: number) =>
      new OutputError(`${at.url(key)} holds ${bytes} bytes, more than the ${MAX_TEXT_BYTES} a state file of bulk-extract may have: it is not one bulk-extract wrote, so it is not read.`);
    if ((answer.contentLength ?? 0) > MAX_TEXT_BYTES) throw tooLarge(answer.contentLength ?? 0);
    const chunks: Buffer[] = [];
    let read = 0;
    // A stall here is retried like a broken connection (at.request wraps its last failure).
    for await (const chunk of guarded(at, answer.readableStreamBody, (stalled) => stalled)) {
      read += (chunk as Buffer).length;
      if (read > MAX_TEXT_BYTES) throw tooLarge(read);
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks).toString('utf8');
  });
}

/** The answer of a request about one blob, or undefined when the blob is not there (the container is). */
async function ifPresent<T>(answer: Promise<T>): Promise<T | undefined> {
  try {
    return await answer;
  } catch (error) {
    if (isBlobAbsent(error)) return undefined;
    throw error;
  }
}

async function size(at: Container, key: string): Promise<number | undefined> {
  const blob = at.client.getBlobClient(at.root + key);
  const properties = await at.request('Get Blob Properties', key, (abortSignal) => ifPresent(blob.getProperties({ abortSignal })));
  return properties === undefined ? undefined : properties.contentLength ?? 0;
}

async function readBlob(at: Container, key: string): Promise<NodeJS.ReadableStream> {
  const blob = at.client.getBlobClient(at.root + key);
  const answer = await at.request('Get Blob', key, () => ifPresent(blob.download()));
  if (answer === undefined) throw new OutputError(`${at.url(key)} does not exist.`);
  if (answer.readableStreamBody === undefined) throw new OutputError(`Get Blob of ${at.url(key)} returned no readable body.`);
  // Read by the caller, outside at.request: a stall fails with the message that says what to do.
  return guarded(at, answer.readableStreamBody, (stalled) => at.fail('Get Blob', key, stalled));
}

/**
 * A download's body, failed when no byte of it comes for the request timeout: the SDK's own
 * timeout ends when the headers arrive, and a server that then stalls would hold the run forever.
 */
function guarded(at: Container, body: NodeJS.ReadableStream | undefined, failure: (stalled: Error) => Error): Readable {
  if (body === undefined) return Readable.from([]);
  return withIdleTimeout(body as Readable, at.timeoutMs, () => failure(stalledAnswer(at.timeoutMs)));
}

async function* listKeys(at: Container, prefix: string): AsyncGenerator<string> {
  let token: string | undefined;
  do {
    const page = await at.request('List Blobs', prefix, async (abortSignal) => {
      const listing = at.client.listBlobsFlat({ prefix: at.root + prefix, includeMetadata: true, abortSignal });
      const from = token === undefined ? {} : { continuationToken: token };
      const next = await listing.byPage({ maxPageSize: at.pageSize, ...from }).next();
      return next.done === true ? undefined : next.value;
    });
    if (page === undefined) return;
    for (const item of page.segment.blobItems) {
      if (item.metadata?.hdi_isfolder === 'true') continue;
      yield item.name.slice(at.root.length);
    }
    token = page.continuationToken === '' ? undefined : page.continuationToken;
  } while (token !== undefined);
}

async function removeKeys(at: Container, keys: readonly string[]): Promise<void> {
  for (let start = 0; start < keys.length; start += DELETES_AT_ONCE) {
    await Promise.all(keys.slice(start, start + DELETES_AT_ONCE).map(async (key) => {
      const blob = at.client.getBlobClient(at.root + key);
      await at.request('Delete Blob', key, (abortSignal) => ifPresent(blob.delete({ abortSignal })));
    }));
  }
}
