import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Clock } from '../util/clock.js';

export const SESSION_COOKIE = 'session';

/** Who made a request, and with which mechanism. */
export interface Principal {
  mechanism: 'api-key' | 'token' | 'cookie';
  user: string;
  apiKeyId?: number;
  /** What the simulator's `capabilities` option names the credential by: its API key, OAuth client id or user. */
  credential: string;
}

export interface ClientCredential {
  id: string;
  secret: string;
}

export interface UserCredential {
  user: string;
  password: string;
}

interface IssuedToken {
  clientId: string;
  expiresAtMs: number;
}

/**
 * The credentials the simulator accepts and the tokens and cookie sessions it has issued. Tokens and
 * sessions are random and opaque; expired tokens are dropped as new ones are issued.
 */
export class Credentials {
  private readonly apiKeys = new Map<string, Principal>();
  private readonly clients = new Map<string, string>();
  private readonly users = new Map<string, string>();
  private readonly tokens = new Map<string, IssuedToken>();
  private readonly sessions = new Map<string, string>();

  constructor(
    project: string,
    accepted: {
      apiKeys: readonly string[];
      clients: readonly ClientCredential[];
      users: readonly UserCredential[];
    },
    private readonly clock: Clock,
  ) {
    accepted.apiKeys.forEach((key, i) => {
      this.apiKeys.set(key, {
        mechanism: 'api-key',
        user: `service-account-${i + 1}@${project}`,
        apiKeyId: 1000 + i,
        credential: key,
      });
    });
    for (const client of accepted.clients) this.clients.set(client.id, client.secret);
    for (const user of accepted.users) this.users.set(user.user, user.password);
  }

  /**
   * Resolves the credential of a request. A credential that is present but wrong yields undefined:
   * the request is not retried with a weaker mechanism.
   */
  authenticate(headers: IncomingHttpHeaders): Principal | undefined {
    const apiKey = headers['api-key'];
    if (apiKey !== undefined) return typeof apiKey === 'string' ? this.apiKeys.get(apiKey) : undefined;
    const authorization = headers.authorization;
    if (authorization !== undefined) {
      const match = /^Bearer (\S+)$/i.exec(authorization);
      const token = match?.[1] === undefined ? undefined : this.tokens.get(match[1]);
      if (token === undefined || token.expiresAtMs <= this.clock.now()) return undefined;
      return { mechanism: 'token', user: token.clientId, credential: token.clientId };
    }
    const session = this.sessionOf(headers);
    const user = session === undefined ? undefined : this.sessions.get(session);
    return user === undefined ? undefined : { mechanism: 'cookie', user, credential: user };
  }

  /** Client-credentials grant: a new token, or undefined when the client is unknown. */
  issueToken(clientId: string, clientSecret: string, ttlSeconds: number): string | undefined {
    if (this.clients.get(clientId) !== clientSecret) return undefined;
    const now = this.clock.now();
    for (const [token, issued] of this.tokens) if (issued.expiresAtMs <= now) this.tokens.delete(token);
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, { clientId, expiresAtMs: now + ttlSeconds * 1000 });
    return token;
  }

  /** Password login: a new session id, or undefined when the user or password is wrong. */
  login(user: string, password: string): string | undefined {
    if (this.users.get(user) !== password) return undefined;
    const session = randomBytes(24).toString('base64url');
    this.sessions.set(session, user);
    return session;
  }

  /** Ends the cookie session of a request; returns the user it belonged to, if any. */
  logout(headers: IncomingHttpHeaders): string | undefined {
    const session = this.sessionOf(headers);
    if (session === undefined) return undefined;
    const user = this.sessions.get(session);
    this.sessions.delete(session);
    return user;
  }

  private sessionOf(headers: IncomingHttpHeaders): string | undefined {
    for (const part of (headers.cookie ?? '').split(';')) {
      const [name, ...value] = part.trim().split('=');
      if (name === SESSION_COOKIE) return value.join('=');
    }
    return undefined;
  }
}
