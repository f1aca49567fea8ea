import { type Credentials, type Principal, SESSION_COOKIE } from './credentials.js';
import { type Exchange, readForm, sendError, sendJson } from './respond.js';
import type { SimulatorStats } from './stats.js';

export interface AuthContext {
  credentials: Credentials;
  project: string;
  projectId: number;
  tokenTtlSeconds: number;
  stats: SimulatorStats;
}

/**
 * `POST /oauth2/token`, the identity provider's token endpoint: client-credentials grant, form
 * encoded, client authenticated in the body or by HTTP Basic. Errors use the OAuth 2.0 shape
 * (RFC 6749 section 5.2), as a real identity provider does, not the platform's.
 */
export async function handleToken(ctx: AuthContext, ex: Exchange): Promise<void> {
  const noStore = { 'cache-control': 'no-store' };
  if (!(ex.req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
    return oauthError(ex, 400, 'invalid_request', 'Expected a form-encoded body.');
  }
  const form = await readForm(ex.req);
  if (form === undefined) return oauthError(ex, 400, 'invalid_request', 'Unreadable request body.');
  if (form.get('grant_type') !== 'client_credentials') {
    return oauthError(ex, 400, 'unsupported_grant_type', 'Only grant_type=client_credentials is supported.');
  }
  const basic = basicCredentials(ex.req.headers.authorization);
  if (basic === 'malformed')
    return oauthError(ex, 400, 'invalid_request', 'Malformed HTTP Basic credentials.');
  const clientId = basic?.id ?? form.get('client_id');
  const secret = basic?.secret ?? form.get('client_secret');
  if (clientId === undefined || secret === undefined) {
    return oauthError(ex, 400, 'invalid_request', 'client_id and client_secret are required.');
  }
  const token = ctx.credentials.issueToken(clientId, secret, ctx.tokenTtlSeconds);
  if (token === undefined) return oauthError(ex, 401, 'invalid_client', 'Client authentication failed.');
  ctx.stats.tokensIssued++;
  return sendJson(
    ex,
    200,
    {
      access_token: token,
      token_type: 'Bearer',
      expires_in: ctx.tokenTtlSeconds,
      scope: form.get('scope') ?? '',
    },
    noStore,
  );
}

/**
 * Client credentials from `Authorization: Basic`: base64 of `id:secret`, split at the first colon
 * (RFC 7617), each part form-urlencoded (RFC 6749 section 2.3.1).
 */
function basicCredentials(
  header: string | undefined,
): { id: string; secret: string } | 'malformed' | undefined {
  const encoded = /^Basic (\S+)$/i.exec(header ?? '')?.[1];
  if (encoded === undefined) return undefined;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  try {
    const formDecode = (part: string) => decodeURIComponent(part.replaceAll('+', ' '));
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    return 'malformed';
  }
}

function oauthError(ex: Exchange, status: number, error: string, description: string) {
  return sendJson(ex, status, { error, error_description: description }, { 'cache-control': 'no-store' });
}

/**
 * `POST /login` with `user` and `password` (form or JSON): stands in for the browser sign-in that
 * ends with a session cookie. Deprecated upstream, like API keys.
 */
export async function handleLogin(ctx: AuthContext, ex: Exchange): Promise<void> {
  const form = await readForm(ex.req);
  const user = form?.get('user');
  const session = user === undefined ? undefined : ctx.credentials.login(user, form?.get('password') ?? '');
  if (user === undefined || session === undefined) return sendError(ex, 401, 'Unauthorized');
  return sendJson(ex, 200, statusBody(ctx, { mechanism: 'cookie', user, credential: user }), {
    'set-cookie': `${SESSION_COOKIE}=${session}; Path=/; HttpOnly; SameSite=Lax`,
  });
}

/**
 * `GET /login/status` at the server root. The legacy endpoint knows API keys and cookie sessions;
 * for anything else (no credential, a wrong one, or an OAuth token) it answers `loggedIn: false`.
 */
export function handleLoginStatus(ctx: AuthContext, ex: Exchange): Promise<void> {
  if (!acceptsJson(ex)) return sendError(ex, 406, 'This endpoint answers application/json only.');
  const principal = ctx.credentials.authenticate(ex.req.headers);
  return sendJson(ex, 200, statusBody(ctx, principal?.mechanism === 'token' ? undefined : principal));
}

/** `GET /logout`: ends the cookie session and answers the status shape with `loggedIn: false`. */
export function handleLogout(ctx: AuthContext, ex: Exchange): Promise<void> {
  const user = ctx.credentials.logout(ex.req.headers);
  const body = {
    data: {
      user: user ?? '',
      loggedIn: false,
      project: user === undefined ? '' : ctx.project,
      projectId: user === undefined ? -1 : ctx.projectId,
    },
  };
  return sendJson(ex, 200, body, {
    'set-cookie': `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`,
  });
}

function statusBody(ctx: AuthContext, principal: Principal | undefined) {
  if (principal === undefined) return { data: { user: '', loggedIn: false, project: '', projectId: -1 } };
  return {
    data: {
      user: principal.user,
      loggedIn: true,
      project: ctx.project,
      projectId: ctx.projectId,
      ...(principal.apiKeyId === undefined ? {} : { apiKeyId: principal.apiKeyId }),
    },
  };
}

function acceptsJson(ex: Exchange): boolean {
  const accept = ex.req.headers.accept;
  return accept === undefined || /application\/json|application\/\*|\*\/\*/.test(accept);
}
