import type { Secret } from '../../util/secret.js';
import type { Logger } from '../../log.js';
import type { Clock } from '../../util/clock.js';
import type { Redactor } from '../../util/redact.js';
import { checkAnswerBytes, parseIfSound } from '../answer-bytes.js';
import { AuthError, HttpStatusError, InvalidJsonError, type RequestContext, RETRYABLE_STATUSES } from '../errors.js';
import { firstHeader, SMALL_ANSWER_LIMIT, type Transport } from '../transport.js';
import { type Authenticator, credentialKey } from './authenticator.js';

export interface ClientCredentialsOptions {
  tokenUrl: URL;
  clientId: string;
  clientSecret: Secret;
  /** Sent space-separated as `scope`; omitted when empty. */
  scopes: readonly string[];
  /** Sent as `audience` when set (identity providers such as Auth0 want it). */
  audience?: string | undefined;
}

/** Tokens are renewed this long before they expire (or at half their lifetime, if shorter). */
export const TOKEN_LEEWAY_MS = 30_000;

interface Token {
  value: string;
  expiresAtMs: number;
  renewAtMs: number;
}

/**
 * OAuth 2.0 client-credentials grant (RFC 6749 section 4.4). The token is cached and renewed before
 * it expires; concurrent requests share one renewal in flight; a 401 renews it unless another
 * request already did.
 *
 * A renewal is one token request, never retried here: a retryable failure (429, 5xx, a network
 * error or timeout, a body that is not JSON) is thrown as it is, and the request that needed the
 * token counts it as one of its attempts and retries it (PlatformClient), so that a request has one
 * retry budget. A refusal (400, 401, 403) is an AuthError.
 *
 * Each token is added to the run's redactor the moment its answer is read, before anything can
 * print it: a server that quotes the request's Authorization header in an error (some gateways
 * do) then shows `Bearer [redacted]` in the log, the errors, the run records and `status`.
 */
export class ClientCredentialsAuth implements Authenticator {
  readonly mechanism = 'oauth-client-credentials';
  /** The identity provider issued the token the platform refused: what it holds comes from all of source.auth. */
  readonly check = 'source.auth';
  private token: Token | undefined;
  private renewal: Promise<Token> | undefined;

  constructor(
    private readonly options: ClientCredentialsOptions,
    private readonly deps: { transport: Transport; clock: Clock; logger: Logger; redactor: Redactor },
  ) {}

  async headers(): Promise<Record<string, string>> {
    const fresh = this.token !== undefined && this.deps.clock.now() < this.token.renewAtMs;
    const token = fresh && this.token !== undefined ? this.token : await this.renew();
    return { authorization: `Bearer ${token.value}` };
  }

  async onUnauthorized(used: Record<string, string>): Promise<boolean> {
    const current = this.token;
    const renewedMeanwhile = current !== undefined && used.authorization !== `Bearer ${current.value}`;
    if (!renewedMeanwhile) {
      this.token = undefined;
      await this.renew();
    }
    return true;
  }

  close(): Promise<void> {
    return this.deps.transport.close();
  }

  private renew(): Promise<Token> {
    this.renewal ??= this.fetchToken().finally(() => {
      this.renewal = undefined;
    });
    return this.renewal;
  }

  private async fetchToken(): Promise<Token> {
    const { tokenUrl, clientId, clientSecret, scopes, audience } = this.options;
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId });
    form.set('client_secret', clientSecret.reveal());
    if (scopes.length > 0) form.set('scope', scopes.join(' '));
    if (audience !== undefined) form.set('audience', audience);
    const path = `${tokenUrl.pathname}${tokenUrl.search}`;
    const ctx: RequestContext = { method: 'POST', path, origin: tokenUrl.origin };
    const headers = { 'content-type': 'application/x-www-form-urlencoded', 'accept': 'application/json' };
    // A token answer is a few KB: at most 1 MiB, whatever source.maxResponseBytes says.
    const raw = await this.deps.transport.request('POST', path, headers, ctx, form.toString(), undefined, SMALL_ANSWER_LIMIT);
    const withId = { ...ctx, ...(raw.requestId === undefined ? {} : { requestId: raw.requestId }) };
    if (raw.status !== 200) {
      const body = parseIfSound(raw.body);
      if (RETRYABLE_STATUSES.has(raw.status)) {
        const retryAfter = firstHeader(raw.headers, 'retry-after');
        const idp = `The identity provider at ${tokenUrl.origin}`;
        throw new HttpStatusError(raw.status, oauthError(body), retryAfter, withId, idp);
      }
      // The provider's description may end a sentence of its own ("Client authentication failed.").
      const answer = `HTTP ${raw.status} ${oauthError(body) ?? ''}`.trim().replace(/\.$/, '');
      const check = `source.auth.clientId ('${clientId}') and ${credentialKey('clientSecret', clientSecret)}`;
      throw new AuthError(`The identity provider refused the client credentials of '${clientId}': ${answer}. Check ${check}`, withId);
    }
    checkAnswerBytes(raw.body, withId);
    const token = this.parseToken(parseJson(raw.body), withId);
    this.token = token;
    this.deps.logger.debug({ clientId, expiresInMs: token.expiresAtMs - this.deps.clock.now() }, 'access token acquired');
    return token;
  }

  private parseToken(body: unknown, ctx: RequestContext): Token {
    const fields = (body ?? {}) as { access_token?: unknown; expires_in?: unknown };
    if (typeof fields.access_token === 'string') this.deps.redactor.add(fields.access_token);
    if (body === undefined) throw new InvalidJsonError('The token endpoint answered 200 with a body that is not JSON', ctx);
    if (typeof fields.access_token !== 'string' || fields.access_token === '') {
      throw new AuthError('The token endpoint answered 200 without an access_token', ctx);
    }
    const lifetimeMs = fields.expires_in === undefined ? 3_600_000 : Number(fields.expires_in) * 1000;
    if (!Number.isFinite(lifetimeMs) || lifetimeMs <= 0) {
      throw new AuthError(`The token endpoint answered an invalid expires_in: ${JSON.stringify(fields.expires_in)}`, ctx);
    }
    const now = this.deps.clock.now();
    return {
      value: fields.access_token,
      expiresAtMs: now + lifetimeMs,
      renewAtMs: now + lifetimeMs - Math.min(TOKEN_LEEWAY_MS, lifetimeMs / 2),
    };
  }
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** `error: error_description` of an OAuth error body (RFC 6749 section 5.2), when it is one. */
function oauthError(body: unknown): string | undefined {
  const fields = (body ?? {}) as { error?: unknown; error_description?: unknown };
  if (typeof fields.error !== 'string') return undefined;
  return typeof fields.error_description === 'string' ? `${fields.error}: ${fields.error_description}` : fields.error;
}
