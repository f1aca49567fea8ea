import { type Logger, NOTICE } from '../../log.js';
import type { Secret } from '../../util/secret.js';

export type Mechanism = 'api-key' | 'token' | 'oauth-client-credentials' | 'cookie';

/** Puts a credential on requests; one per mechanism. */
export interface Authenticator {
  readonly mechanism: Mechanism;
  /**
   * What to check when the platform refuses the credential (HTTP 401): the key, and where its secret
   * came from (`source.auth.apiKey (the environment variable API_KEY)`), never the secret.
   */
  readonly check: string;
  /** Headers that carry the credential on the next request. */
  headers(): Promise<Record<string, string>>;
  /**
   * A request sent with `used` was answered 401. Resolves true when sending it again may succeed
   * (a token was refreshed, or another request refreshed it meanwhile).
   */
  onUnauthorized(used: Record<string, string>): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * API keys and /login sessions are deprecated upstream: say so. Called once per client, when it is
 * created; a notice (NOTICE), which the CLI says as one plain line a run, not as a log record.
 */
export function warnDeprecated(logger: Logger, mechanism: Mechanism): void {
  logger.warn(
    { mechanism, ...NOTICE },
    'API keys and /login cookie sessions are deprecated by the platform in favour of OpenID Connect; move to source.auth.type: oauth-client-credentials',
  );
}

/** `source.auth.<key> (the environment variable NAME)`, or without the parentheses when the origin is unknown. */
export function credentialKey(key: string, secret: Secret): string {
  return secret.origin === undefined ? `source.auth.${key}` : `source.auth.${key} (${secret.origin})`;
}
