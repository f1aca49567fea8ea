import {
  AnonymousCredential,
  BlobServiceClient,
  type ContainerClient,
  type StoragePipelineOptions,
  StorageSharedKeyCredential,
} from '@azure/storage-blob';
import { DefaultAzureCredential } from '@azure/identity';
import { BulkExtractError, ConfigError } from '../errors.js';
import type { Logger } from '../log.js';
import {
  type AzureCredentialChoice,
  chooseCredential,
  connectionStringParts,
  credentialFix,
  credentialName,
} from './azure-credential.js';
import { azureError, type AzureTarget, stalledAnswer } from './azure-errors.js';
import { type AzureRetryOptions, withRetries } from './azure-retry.js';
import { parseAzureUrl } from './azure-url.js';

const MiB = 1024 * 1024;
/** Azure's limits: blocks up to 4000 MiB, 50,000 blocks a blob, 5,000 blobs a list page. */
const MAX_BLOCK_BYTES = 4000 * MiB;
const MAX_BLOCKS = 50_000;
const MAX_PAGE = 5000;

export interface AzureStoreOptions {
  /** `output.dir`: abfss://, az:// or https://<account>.blob.<cloud>/ (azure-url.ts). */
  url: string;
  /** The storage account of an `az://` URL (output.azure.account). */
  account?: string | undefined;
  /**
   * The Blob service endpoint, replacing the one the URL names: Azurite
   * (`http://127.0.0.1:10000/devstoreaccount1`), a sovereign cloud, a private endpoint. Plain
   * http:// only to this machine (loopback), since the credential travels with every request.
   */
  endpoint?: string | undefined;
  /** Where the credential is read (azure-credential.ts). Default: process.env. */
  env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Bytes per staged block. Default 8 MiB, at most 4000 MiB; raised for a file that would need more than 50,000. */
  blockSizeBytes?: number | undefined;
  /** A file up to this size is uploaded in one Put Blob, a larger one in staged blocks. Default 32 MiB. */
  singleShotBytes?: number | undefined;
  /** Blocks in flight per publish; each buffers one block in memory. Default 4. */
  concurrency?: number | undefined;
  /**
   * Time one HTTP request (one try) may take before it fails and is retried; a download's body
   * also fails when no byte of it comes for this long. Default 120,000 ms.
   */
  requestTimeoutMs?: number | undefined;
  /** Blobs per list request (1 to 5000). Default 5000; tests lower it to exercise pagination. */
  listPageSize?: number | undefined;
  /** Retries of requests that may pass (throttling, 5xx, broken connections). */
  retry?: AzureRetryOptions | undefined;
  /** Told each secret read from the environment before any request, to hide it in what is printed (a Redactor). */
  onSecret?: ((value: string) => void) | undefined;
  logger: Logger;
}

/** A container prefix and the client that reaches it: what every operation of the store works with. */
export interface Container {
  client: ContainerClient;
  /** The output URL as given, for messages and logs. */
  location: string;
  /** The prefix with its trailing '/', or ''. */
  root: string;
  /** The credential as messages name it (never its value). */
  credential: string;
  log: Logger;
  blockSize: number;
  singleShot: number;
  concurrency: number;
  pageSize: number;
  /** requestTimeoutMs: the bound of one request, and of a pause in a body being read. */
  timeoutMs: number;
  /** The URL of a key, for messages. */
  url: (key: string) => string;
  /** A failed request as one line that says what to do (AzureOutputError, AzureAccessError or AzureAuthError). */
  fail: (operation: string, key: string, error: unknown) => BulkExtractError;
  /**
   * Sends an idempotent request, retried while it may pass; its final failure through `fail`.
   * `send` gets a signal that aborts when the attempt has taken the request timeout: a request
   * whose answer is small passes it to the SDK, which otherwise bounds only the wait for the
   * headers (a body that then stalls would hold the run forever).
   */
  request: <T>(operation: string, key: string, send: (abortSignal: AbortSignal) => Promise<T>) => Promise<T>;
}

/** The client and the names of the container prefix `options.url`, with the options checked. */
export function containerOf(options: AzureStoreOptions): Container {
  const choice = chooseCredential(options.env ?? process.env);
  for (const secret of choice.secrets) options.onSecret?.(secret);
  const where = parseAzureUrl(options.url, options.account);
  const fromConnection = choice.kind === 'connection string' ? connectionStringParts(choice.connectionString) : undefined;
  const endpoint = options.endpoint === undefined ? undefined : checkedEndpoint(options.endpoint);
  const account = where.account ?? fromConnection?.AccountName;
  const serviceUrl = endpoint ?? where.serviceUrl;
  if (serviceUrl === undefined && choice.kind !== 'connection string') {
    throw new ConfigError(`output.dir ${where.location} names no storage account: set output.azure.account (az:// takes the account from the config), or write output.dir as abfss://<container>@<account>.dfs.core.windows.net/<path>.`);
  }
  if (choice.kind === 'DefaultAzureCredential' && serviceUrl?.startsWith('http:') === true) {
    // The SDK would refuse at the first request, in words that do not say what to set.
    throw new ConfigError(`No Azure credential is set in the environment (AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN), and DefaultAzureCredential's tokens are sent over https:// only, not to ${serviceUrl}: set one of the three (for Azurite, its account key in AZURE_STORAGE_KEY).`);
  }
  const root = where.prefix === '' ? '' : `${where.prefix}/`;
  const url = (key: string) => `${where.location}/${key}`;
  const timeoutMs = integerOption('requestTimeoutMs', options.requestTimeoutMs ?? 120_000, 100, 3_600_000);
  // One try per SDK call, bounded in time; withRetries sends it again with our backoff and clock.
  const pipeline = { retryOptions: { maxTries: 1, tryTimeoutInMs: timeoutMs } };
  const service = serviceClient(choice, serviceUrl, account, pipeline);
  const credential = credentialName(choice);
  const target: AzureTarget = {
    container: where.container,
    account,
    endpoint: originOf(service.url),
    credential,
    credentialFix: credentialFix(choice),
  };
  const log = options.logger.child({ output: where.location });
  const fail = (operation: string, key: string, error: unknown) => azureError(operation, url(key), target, error);
  const retry = options.retry ?? {};
  return {
    client: service.getContainerClient(where.container),
    location: where.location,
    root,
    credential,
    log,
    blockSize: integerOption('blockSizeBytes', options.blockSizeBytes ?? 8 * MiB, 1, MAX_BLOCK_BYTES),
    singleShot: integerOption('singleShotBytes', options.singleShotBytes ?? 32 * MiB, 1, 256 * MiB),
    concurrency: integerOption('concurrency', options.concurrency ?? 4, 1, 64),
    pageSize: integerOption('listPageSize', options.listPageSize ?? MAX_PAGE, 1, MAX_PAGE),
    timeoutMs,
    url,
    fail,
    async request(operation, key, send) {
      try {
        return await withRetries(() => sendTimed(send, timeoutMs), retry, log, { operation, key });
      } catch (error) {
        // A refusal of our own (a state file too large to read) is already the error to give.
        if (error instanceof BulkExtractError) throw error;
        throw fail(operation, key, error);
      }
    },
  };
}

/** One attempt of `send`, its abort by the request timeout reported as a stalled answer (which is retried). */
async function sendTimed<T>(send: (abortSignal: AbortSignal) => Promise<T>, timeoutMs: number): Promise<T> {
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    return await send(timeout);
  } catch (error) {
    if (timeout.aborted && endedByAbort(error)) throw stalledAnswer(timeoutMs);
    throw error;
  }
}

/**
 * Whether the SDK failed because its signal aborted: an AbortError before the answer, or its
 * reading of the answer's body cut ("Error reading response as text: aborted"). A request that
 * was not given the signal (a long upload) and failed otherwise keeps its own error.
 */
function endedByAbort(error: unknown): boolean {
  const e = error as { name?: unknown; code?: unknown; message?: unknown } | null;
  return e?.name === 'AbortError' || (e?.code === 'PARSE_ERROR' && String(e.message).endsWith('aborted'));
}

/** The block size for a file of `bytes`: the configured one, raised so that no file needs more than 50,000 blocks. */
export function blockSizeFor(at: Container, bytes: number): number {
  return Math.max(at.blockSize, Math.ceil(bytes / MAX_BLOCKS));
}

function serviceClient(
  choice: AzureCredentialChoice,
  serviceUrl: string | undefined,
  account: string | undefined,
  pipeline: StoragePipelineOptions,
): BlobServiceClient {
  switch (choice.kind) {
    case 'connection string': {
      if (serviceUrl !== undefined && connectionStringParts(choice.connectionString).BlobEndpoint === undefined) {
        // An account key in the connection string, the endpoint from the URL or config.
        const parts = connectionStringParts(choice.connectionString);
        if (parts.AccountName !== undefined && parts.AccountKey !== undefined) {
          const key = new StorageSharedKeyCredential(parts.AccountName, parts.AccountKey);
          return new BlobServiceClient(serviceUrl, key, pipeline);
        }
      }
      try {
        return BlobServiceClient.fromConnectionString(choice.connectionString, pipeline);
      } catch {
        throw new ConfigError('AZURE_STORAGE_CONNECTION_STRING is not a connection string Azure accepts (AccountName=...;AccountKey=...;BlobEndpoint=... or ...;SharedAccessSignature=...).');
      }
    }
    case 'account key':
      if (account === undefined || serviceUrl === undefined) {
        throw new ConfigError('An account key (AZURE_STORAGE_KEY) needs the account: name it in output.dir or output.azure.account.');
      }
      return new BlobServiceClient(serviceUrl, new StorageSharedKeyCredential(account, choice.accountKey), pipeline);
    case 'SAS token':
      return new BlobServiceClient(`${serviceUrl ?? ''}?${choice.sasToken}`, new AnonymousCredential(), pipeline);
    case 'DefaultAzureCredential':
      return new BlobServiceClient(serviceUrl ?? '', new DefaultAzureCredential(), pipeline);
  }
}

function integerOption(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`Azure option ${name} must be an integer from ${min} to ${max}; got ${value}.`);
  }
  return value;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The endpoint without its trailing '/', checked: http(s), no user info, query or fragment; http only to loopback. */
function checkedEndpoint(endpoint: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(endpoint);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || !['http:', 'https:'].includes(parsed.protocol) || parsed.username !== '' || parsed.search !== '' || parsed.hash !== '') {
    throw new ConfigError('output.azure.endpoint must be an http:// or https:// address without credentials, query or fragment (a SAS token goes in AZURE_STORAGE_SAS_TOKEN).');
  }
  if (parsed.protocol === 'http:' && !LOOPBACK.has(parsed.hostname)) {
    throw new ConfigError(`output.azure.endpoint: refusing to send the credential over plain http:// to ${parsed.hostname}: use https:// (plain http is for an emulator on this machine, such as Azurite).`);
  }
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
}

/** The origin and path of a service URL, without a SAS token's query. */
function originOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
}
