import { AccessError, AuthError, HttpStatusError, type RequestContext } from './errors.js';

/**
 * What a 403 or 404 on the run's first contact with the platform means. Neither passes with time,
 * so the run is refused before it writes anything; the platform's answer tells which setting to
 * change:
 *
 * - 404: nothing is at the path, so `source.baseUrl` is not the project's API root (exit 2);
 * - 403 saying the project does not exist: the project in `source.baseUrl` is wrong (exit 2);
 * - 403 naming a capability (`eventsAcl:READ`): the credential may not read that collection (exit 2:
 *   its access is granted in the project, not in the job file);
 * - any other 403: the platform refused the credential itself for this project (`E_AUTH`, exit 3).
 *
 * Undefined for any other error: it is left to the caller.
 */
export function refusedAccess(error: unknown): AccessError | AuthError | undefined {
  if (!(error instanceof HttpStatusError) || (error.status !== 403 && error.status !== 404)) return undefined;
  const ctx: RequestContext = {
    method: error.method,
    path: error.path,
    ...(error.requestId === undefined ? {} : { requestId: error.requestId }),
    ...(error.attempts === undefined ? {} : { attempts: error.attempts }),
  };
  const answer = `HTTP ${error.status}${error.platformMessage === undefined ? '' : `: ${error.platformMessage}`}`;
  const project = /\/projects\/([^/?]+)/.exec(error.path)?.[1];
  const named = project === undefined ? 'the project' : `project '${decodeURIComponent(project)}'`;
  if (error.status === 404) {
    return new AccessError(
      `The platform has nothing at ${error.method} ${error.path.split('?')[0] ?? ''} (${answer}). Check source.baseUrl: it must be the project's API root, https://{cluster}.{host}/api/v1/projects/{project}`,
      ctx,
    );
  }
  const message = error.platformMessage ?? '';
  if (/\bproject\b.*\bdoes not exist\b/i.test(message)) {
    return new AccessError(`The platform has no ${named} (${answer}). Check the project in source.baseUrl`, ctx);
  }
  const capability = /\b([A-Za-z]+Acl:[A-Z]+)\b/.exec(message)?.[1] ?? (/capabilit/i.test(message) ? 'a capability' : undefined);
  if (capability !== undefined) {
    return new AccessError(
      `The credential lacks ${capability === 'a capability' ? capability : `the capability ${capability}`} in ${named} (${answer}). Have it granted to the credential's group, or leave out the streams that need it`,
      ctx,
    );
  }
  return new AuthError(`The platform refused the credential for ${named} (${answer}). Check source.auth: the credential, and its access to the project`, ctx);
}
