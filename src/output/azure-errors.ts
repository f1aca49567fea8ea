import { STATUS_CODES } from 'node:http';
import { type BulkExtractError, OutputAccessError, OutputAuthError, OutputError } from '../errors.js';

/** What a failed Azure request was, for logs and callers (never a credential). */
export interface AzureFailure {
  operation: string;
  /** The URL of the blob or prefix, as messages name it. */
  target: string;
  /** Azure's error code (ContainerNotFound, AuthorizationFailure, ServerBusy), else the Node or SDK error's. */
  azureCode: string;
  httpStatus: number | undefined;
  requestId: string | undefined;
}

/** A failed Azure request that may pass (throttling past its retries, a broken connection): exit 1, resumable. */
export class AzureOutputError extends OutputError {
  constructor(message: string, readonly failure: AzureFailure, options: { cause: unknown }) {
    super(message, options);
  }
}

/** The container or account is not there: it does not pass by itself (exit 2). */
export class AzureAccessError extends OutputAccessError {
  constructor(message: string, readonly failure: AzureFailure, options: { cause: unknown }) {
    super(message, options);
  }
}

/** The credential was refused (exit 3). */
export class AzureAuthError extends OutputAuthError {
  constructor(message: string, readonly failure: AzureFailure, options: { cause: unknown }) {
    super(message, options);
  }
}

interface SdkError {
  name?: string;
  code?: string;
  statusCode?: number;
  message?: string;
  response?: { headers?: { get?: (name: string) => string | undefined } };
}

/**
 * Azure's error code (its body's, else its x-ms-error-code header's), else the Node or SDK error's
 * code or name, else the HTTP status as a word.
 */
export function errorCode(error: unknown): string {
  const e = (error ?? {}) as SdkError;
  if (typeof e.code === 'string' && e.code !== '') return e.code;
  // A HEAD answer has no body: Azure's code comes in its header alone.
  const header = e.response?.headers?.get?.('x-ms-error-code');
  if (header !== undefined && header !== '') return header;
  if (e.statusCode !== undefined) return STATUS_CODES[e.statusCode]?.replace(/ /g, '') ?? `HTTP${e.statusCode}`;
  if (e.name !== undefined && e.name !== 'Error' && e.name !== 'RestError') return e.name;
  return 'error';
}

function statusOf(error: unknown): number | undefined {
  const status = (error as SdkError | null)?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

/** The blob is not there (the container is: ContainerNotFound is an error). */
export function isBlobAbsent(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'BlobNotFound' || (statusOf(error) === 404 && (code === 'NotFound' || code === 'ResourceNotFound'));
}

/** A conditional create that did not happen: the blob exists (409 BlobAlreadyExists, or 412). */
export function isAlreadyThere(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'BlobAlreadyExists' || code === 'ConditionNotMet' || statusOf(error) === 412;
}

/**
 * Whether a failed request may pass when sent again: throttling (503 ServerBusy, 500
 * OperationTimedOut), other 500/502/503/504 and 408, a connection that broke or timed out.
 */
export function isTransient(error: unknown): boolean {
  const status = statusOf(error);
  if (status !== undefined) return status === 408 || status === 429 || status >= 500;
  const code = errorCode(error);
  return NETWORK_CODES.has(code) || code === STALLED || (error as SdkError | null)?.name === 'AbortError';
}

/** The code of an answer that stopped arriving: transient, like a broken connection. */
export const STALLED = 'BodyStalled';

/** An answer that did not come whole: no byte of it for `ms`, or the whole of it not within `ms`. */
export function stalledAnswer(ms: number): Error {
  return Object.assign(new Error(`no complete answer within ${ms / 1000} s`), { code: STALLED });
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'REQUEST_SEND_ERROR',
  'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT',
]);

const AUTH_CODES = new Set([
  'AuthenticationFailed', 'AuthorizationFailure', 'AuthorizationPermissionMismatch', 'AuthorizationPermissionDenied',
  'AuthorizationResourceTypeMismatch', 'AuthorizationServiceMismatch', 'AuthorizationSourceIPMismatch',
  'AuthorizationProtocolMismatch', 'InvalidAuthenticationInfo', 'KeyBasedAuthenticationNotPermitted',
  'NoAuthenticationInformation', 'CredentialUnavailableError', 'AuthenticationError', 'AggregateAuthenticationError',
  'AuthenticationRequiredError',
]);

/** Where the output is and how it is reached, for the hints of errors. */
export interface AzureTarget {
  container: string;
  account: string | undefined;
  /** The Blob endpoint's origin (no credentials), e.g. https://acc.blob.core.windows.net. */
  endpoint: string;
  /** The credential as messages name it (credentialName). */
  credential: string;
  /** What to check of it when it is refused (credentialFix). */
  credentialFix: string;
}

type Kind = 'auth' | 'access' | 'other';

function classify(code: string, status: number | undefined): { kind: Kind; hint: (at: AzureTarget) => string } {
  if (code === 'ContainerNotFound') {
    return { kind: 'access', hint: (at) => `The container "${at.container}" does not exist: create it (az storage container create --name ${at.container}) or fix output.dir.` };
  }
  if (code === 'ENOTFOUND' || code === 'AccountNotFound' || code === 'ResourceNotFound') {
    return {
      kind: 'access',
      hint: (at) => `No storage account answers at ${at.endpoint}${at.account === undefined ? '' : ` (account "${at.account}")`}: check the account in output.dir (or output.azure.account, output.azure.endpoint).`,
    };
  }
  if (AUTH_CODES.has(code) || status === 401 || status === 403) {
    return {
      kind: 'auth',
      hint: (at) => `Tried ${at.credential}: ${at.credentialFix}.`,
    };
  }
  if (code === 'ServerBusy' || code === 'OperationTimedOut' || status === 503) {
    return { kind: 'other', hint: () => 'Azure throttled the requests past their retries: what was committed stays valid; run again later to resume.' };
  }
  if (code === STALLED) {
    return { kind: 'other', hint: () => 'The server stopped answering mid-request: what was committed stays valid; run again to resume.' };
  }
  if (NETWORK_CODES.has(code)) {
    return { kind: 'other', hint: (at) => `${at.endpoint} is unreachable: check output.azure.endpoint and the network; run again to resume.` };
  }
  return { kind: 'other', hint: () => 'What was committed before stays valid; fix the cause and run again to resume.' };
}

/** The SDK's error as one line that says what to do, of the class that decides the exit code. */
export function azureError(operation: string, target: string, at: AzureTarget, error: unknown): BulkExtractError {
  const azureCode = errorCode(error);
  const httpStatus = statusOf(error);
  const requestId = (error as SdkError | null)?.response?.headers?.get?.('x-ms-request-id');
  // Azure's messages carry a RequestId and Time line after the first: the first says it.
  const detail = ((error as SdkError | null)?.message ?? '').split('\n')[0]?.trim().replace(/\.$/, '') ?? '';
  const http = httpStatus === undefined ? '' : ` (HTTP ${httpStatus})`;
  const said = detail === '' || detail === azureCode ? '' : `: ${detail.slice(0, 300)}`;
  const { kind, hint } = classify(azureCode, httpStatus);
  const message = `Azure ${operation} of ${target} failed: ${azureCode}${http}${said}. ${hint(at)}`;
  const failure: AzureFailure = { operation, target, azureCode, httpStatus, requestId };
  const options = { cause: safeCause(error) };
  if (kind === 'auth') return new AzureAuthError(message, failure, options);
  if (kind === 'access') return new AzureAccessError(message, failure, options);
  return new AzureOutputError(message, failure, options);
}

/**
 * The SDK's error reduced to fields that hold no credential: its `request` holds the headers sent
 * (an Authorization header, a URL with a SAS signature), which anything that serializes a cause
 * (pino's err serializer, util.inspect) would print.
 */
export function safeCause(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const copy = Object.assign(new Error((error.message.split('\n')[0] ?? '').replace(/sig=[^&\s]+/g, 'sig=REDACTED')), { name: error.name });
  const e = error as SdkError;
  if (e.code !== undefined) Object.assign(copy, { code: e.code });
  if (e.statusCode !== undefined) Object.assign(copy, { statusCode: e.statusCode });
  const requestId = e.response?.headers?.get?.('x-ms-request-id');
  return requestId === undefined ? copy : Object.assign(copy, { requestId });
}
