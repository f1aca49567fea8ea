import type { Secret } from '../../util/secret.js';
import { type Authenticator, credentialKey, type Mechanism } from './authenticator.js';

/**
 * A credential that does not change during a run: an API key (`api-key` header), a token obtained
 * elsewhere (`Authorization: Bearer`), or a cookie session (`Cookie`). A 401 cannot be fixed here.
 */
export class StaticAuth implements Authenticator {
  private constructor(
    readonly mechanism: Mechanism,
    readonly check: string,
    private readonly header: string,
    private readonly value: () => string,
  ) {}

  static apiKey(key: Secret): StaticAuth {
    return new StaticAuth('api-key', credentialKey('apiKey', key), 'api-key', () => key.reveal());
  }

  static token(token: Secret): StaticAuth {
    return new StaticAuth('token', credentialKey('token', token), 'authorization', () => `Bearer ${token.reveal()}`);
  }

  /** `cookie` is the Cookie header value, e.g. `session=abc123`. */
  static cookie(cookie: Secret): StaticAuth {
    return new StaticAuth('cookie', credentialKey('cookie', cookie), 'cookie', () => cookie.reveal());
  }

  headers(): Promise<Record<string, string>> {
    return Promise.resolve({ [this.header]: this.value() });
  }

  onUnauthorized(): Promise<boolean> {
    return Promise.resolve(false);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
