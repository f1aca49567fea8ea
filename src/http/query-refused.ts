import { HttpStatusError, QueryRefusedError, type RequestContext } from './errors.js';

/**
 * A 400 on the first request of a stream's chain (no cursor yet) as the refusal of the stream's
 * query: `fix` says what to change in the job file. Undefined for any other error.
 */
export function queryRefused(error: unknown, stream: string, fix: string): QueryRefusedError | undefined {
  if (!(error instanceof HttpStatusError) || error.status !== 400) return undefined;
  const ctx: RequestContext = {
    method: error.method,
    path: error.path,
    ...(error.requestId === undefined ? {} : { requestId: error.requestId }),
    ...(error.attempts === undefined ? {} : { attempts: error.attempts }),
  };
  const said = error.platformMessage === undefined ? 'HTTP 400' : `HTTP 400: ${error.platformMessage.replace(/\.$/, '')}`;
  const what = `The platform refused the query of stream ${stream} (${said}). ${fix}; a run of the job as it stands is refused again`;
  return new QueryRefusedError(what, ctx, stream, { cause: error });
}
