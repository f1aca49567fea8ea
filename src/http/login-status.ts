import { BadResponseError } from './errors.js';
import { type JsonResponse, requestOf } from './interpret-response.js';

/** `GET /login/status` (and `/logout`) answer. */
export interface LoginStatus {
  user: string;
  loggedIn: boolean;
  project: string;
  projectId: number;
  apiKeyId?: number;
}

/** Reads `{"data":{"user","loggedIn","project","projectId","apiKeyId"?}}`; a wrong shape is a BadResponseError. */
export function parseLoginStatus(response: JsonResponse): LoginStatus {
  const data = (response.body as { data?: Partial<LoginStatus> } | null)?.data;
  if (data === undefined || typeof data.loggedIn !== 'boolean' || typeof data.user !== 'string') {
    throw new BadResponseError('The answer has no data.loggedIn and data.user', requestOf('GET', response));
  }
  return {
    user: data.user,
    loggedIn: data.loggedIn,
    project: typeof data.project === 'string' ? data.project : '',
    projectId: typeof data.projectId === 'number' ? data.projectId : -1,
    ...(typeof data.apiKeyId === 'number' ? { apiKeyId: data.apiKeyId } : {}),
  };
}
