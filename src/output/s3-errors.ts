import { STATUS_CODES } from 'node:http';
import { OutputAccessError, OutputAuthError, OutputError } from '../errors.js';

/** A failed S3 request, with the fields logs and callers need (never credentials): exit 1, resumable. */
export class S3OutputError extends OutputError {
  constructor(
    message: string,
    readonly operation: string,
    readonly target: string,
    readonly s3Code: string,
    readonly httpStatus: number | undefined,
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}

/** The bucket is not there, or the credential's policy does not allow the request: no retry mends it (exit 2). */
export class S3AccessError extends OutputAccessError {
  constructor(
    message: string,
    readonly operation: string,
    readonly target: string,
    readonly s3Code: string,
    readonly httpStatus: number | undefined,
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}

/** The credential itself was refused: wrong, expired or missing (exit 3, as the platform's). */
export class S3AuthError extends OutputAuthError {
  constructor(
    message: string,
    readonly operation: string,
    readonly target: string,
    readonly s3Code: string,
    readonly httpStatus: number | undefined,
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}

/** Any of the three: what a failed S3 request becomes. */
export type S3Error = S3OutputError | S3AccessError | S3AuthError;

interface SdkError {
  name?: string;
  Code?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

/** The S3 error code, else the Node error code (ECONNREFUSED), else the HTTP status as a word (HEAD has no body). */
export function errorCode(error: unknown): string {
  const e = (error ?? {}) as SdkError;
  const named = e.Code ?? (e.name === undefined || e.name === 'Error' ? undefined : e.name);
  const status = e.$metadata?.httpStatusCode;
  if ((named === undefined || named.startsWith('Unknown')) && status !== undefined) {
    return STATUS_CODES[status]?.replace(/ /g, '') ?? `HTTP${status}`;
  }
  return named ?? e.code ?? 'error';
}

/** A conditional write that did not happen: the object exists (412), or another conditional write of it runs (409). */
export function isPreconditionFailed(error: unknown): boolean {
  const status = (error as SdkError | null)?.$metadata?.httpStatusCode;
  const code = errorCode(error);
  return status === 412 || code === 'PreconditionFailed' || code === 'ConditionalRequestConflict';
}

/** NoSuchKey, or a 404 without a code (HEAD); NoSuchBucket is an error. */
export function isAbsent(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'NoSuchKey' || code === 'NotFound';
}

/** Fields of an SDK error that hold no credentials (a SignatureDoesNotMatch's CanonicalRequest may hold the token). */
const SAFE_FIELDS = ['Code', 'code', 'errno', 'syscall', 'BucketName', 'Key', 'RequestId', 'HostId', 'Region', 'Endpoint'];

/**
 * The SDK's error reduced to safe fields: its `$response` holds the signed request and with it the session
 * token, and anything that serializes a cause (pino's err serializer, util.inspect) would print it.
 */
export function safeCause(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const copy = Object.assign(new Error(error.message), { name: error.name, stack: error.stack ?? '' });
  for (const name of SAFE_FIELDS) {
    const value = (error as unknown as Record<string, unknown>)[name];
    if (typeof value === 'string' || typeof value === 'number') Object.assign(copy, { [name]: value });
  }
  const metadata = (error as SdkError).$metadata;
  return metadata === undefined ? copy : Object.assign(copy, { $metadata: { ...metadata } });
}

/** The credential itself refused (exit 3). */
const CREDENTIAL_CODES = new Set([
  'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'ExpiredToken', 'InvalidToken', 'TokenRefreshRequired',
  'CredentialsProviderError',
]);
/** The credential accepted, the request not allowed, or nothing to write to (exit 2). */
const ACCESS_CODES = new Set(['NoSuchBucket', 'AccessDenied', 'AllAccessDisabled']);
const CREDENTIAL_HINT =
  'Check the credentials in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_PROFILE or the web identity of the pod)';

/** What a refusal is: the credential (exit 3; a 403 without a code too, as a HEAD's), access (exit 2), or neither. */
function kindOf(code: string, status: number | undefined): 'auth' | 'access' | 'other' {
  if (ACCESS_CODES.has(code)) return 'access';
  return CREDENTIAL_CODES.has(code) || status === 403 ? 'auth' : 'other';
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE',
  'TimeoutError', 'RequestTimeout',
]);

function hintFor(code: string, status: number | undefined, detail: string, bucket: string, endpoint?: string): string {
  if (detail.startsWith('Region is missing')) return 'Set AWS_REGION or output.s3.region.';
  if (code === 'NoSuchBucket') return `The bucket "${bucket}" does not exist: create it or fix output.dir.`;
  if (CREDENTIAL_CODES.has(code)) return `${CREDENTIAL_HINT}.`;
  if (ACCESS_CODES.has(code)) {
    return `The credential works, but its policy does not allow this on the bucket "${bucket}": allow s3:ListBucket, s3:GetObject, s3:PutObject and s3:DeleteObject on it (and its prefix), or fix output.dir.`;
  }
  if (status === 403) return `${CREDENTIAL_HINT}, and that their policy allows this on the bucket "${bucket}".`;
  if (NETWORK_CODES.has(code)) {
    return `${endpoint ?? 'S3'} is unreachable: check output.s3.endpoint and the network.`;
  }
  if (['PermanentRedirect', 'MovedPermanently', 'AuthorizationHeaderMalformed'].includes(code)) {
    return 'The bucket is in another region: set AWS_REGION or output.s3.region.';
  }
  return 'What was committed before stays valid; fix the cause and run again to resume.';
}

export function s3Error(
  operation: string,
  target: string,
  bucket: string,
  endpoint: string | undefined,
  error: unknown,
): S3Error {
  const code = errorCode(error);
  const status = (error as SdkError | undefined)?.$metadata?.httpStatusCode;
  const detail = ((error as SdkError | undefined)?.message ?? '').replace(/\.$/, '');
  const http = status === undefined ? '' : ` (HTTP ${status})`;
  const said = detail === '' || detail === code || detail === 'UnknownError' ? '' : `: ${detail}`;
  const hint = hintFor(code, status, detail, bucket, endpoint);
  const message = `S3 ${operation} of ${target} failed: ${code}${http}${said}. ${hint}`;
  const options = { cause: safeCause(error) };
  const kind = kindOf(code, status);
  if (kind === 'auth') return new S3AuthError(message, operation, target, code, status, options);
  if (kind === 'access') return new S3AccessError(message, operation, target, code, status, options);
  return new S3OutputError(message, operation, target, code, status, options);
}
