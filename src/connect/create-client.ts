import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { SourceConfig } from '../config/source-schema.js';
import { ConfigError } from '../errors.js';
import { type Logger, silentLogger } from '../log.js';
import { type Clock, systemClock } from '../util/clock.js';
import { Redactor } from '../util/redact.js';
import type { RequestLimiter } from '../http/adaptive-limiter.js';
import { type Authenticator, warnDeprecated } from '../http/auth/authenticator.js';
import { ClientCredentialsAuth } from '../http/auth/client-credentials.js';
import { StaticAuth } from '../http/auth/static-auth.js';
import { type Limiter, PlatformClient } from '../http/platform-client.js';
import { assertSecureTransport, Transport, type TransportOptions } from '../http/transport.js';

export interface ClientDeps {
  logger?: Logger;
  clock?: Clock;
  random?: () => number;
  limiter?: Limiter | RequestLimiter;
  /** The config file's path, to resolve a relative `source.caFile`. */
  configFile?: string;
  /**
   * What hides the job's secrets in what is printed (JobConfig.redactor): every access token the
   * client obtains is added to it as it arrives. Default: one of the client's own, which hides
   * nothing that is printed elsewhere; give the job's.
   */
  redactor?: Redactor;
}

/**
 * What of a job's `source` section a client is made from (the run's limiter is the run's own; the
 * budget of response bytes, `maxBufferedBytes`, is the client's, so that every request shares it).
 */
export type ClientSource = Pick<
  SourceConfig,
  | 'baseUrl' | 'auth' | 'appName' | 'allowInsecureHttp' | 'caFile' | 'maxConnections' | 'maxResponseBytes' | 'maxBufferedBytes' |
  'timeouts' | 'retry'
>;

/** Builds the platform client a job's `source` section describes. */
export function createPlatformClient(source: ClientSource, deps: ClientDeps = {}): PlatformClient {
  const logger = deps.logger ?? silentLogger;
  const clock = deps.clock ?? systemClock;
  const random = deps.random ?? Math.random;
  const redactor = deps.redactor ?? new Redactor([]);
  const transport: TransportOptions = {
    connections: source.maxConnections,
    connectTimeoutMs: source.timeouts.connectMs,
    headersTimeoutMs: source.timeouts.headersMs,
    bodyTimeoutMs: source.timeouts.bodyMs,
    requestTimeoutMs: source.timeouts.requestMs,
    maxResponseBytes: source.maxResponseBytes,
    ca: readCa(source.caFile, deps.configFile),
  };
  const auth = createAuthenticator(source, transport, { logger, clock, redactor });
  return new PlatformClient({
    baseUrl: source.baseUrl,
    setting: 'source.baseUrl',
    auth,
    appName: source.appName,
    transport,
    retry: source.retry,
    maxBufferedBytes: source.maxBufferedBytes,
    allowInsecureHttp: source.allowInsecureHttp,
    logger,
    clock,
    random,
    ...(deps.limiter === undefined ? {} : { limiter: deps.limiter }),
  });
}

function createAuthenticator(
  source: ClientSource,
  transport: TransportOptions,
  deps: { logger: Logger; clock: Clock; redactor: Redactor },
): Authenticator {
  const { auth } = source;
  switch (auth.type) {
    case 'api-key':
      warnDeprecated(deps.logger, 'api-key');
      return StaticAuth.apiKey(auth.apiKey);
    case 'cookie':
      warnDeprecated(deps.logger, 'cookie');
      return StaticAuth.cookie(auth.cookie);
    case 'token':
      return StaticAuth.token(auth.token);
    case 'oauth-client-credentials': {
      const tokenUrl = new URL(auth.tokenUrl);
      assertSecureTransport(tokenUrl, source.allowInsecureHttp, 'source.auth.tokenUrl');
      return new ClientCredentialsAuth(
        {
          tokenUrl,
          clientId: auth.clientId,
          clientSecret: auth.clientSecret,
          scopes: auth.scopes,
          audience: auth.audience,
        },
        {
          transport: new Transport(
            tokenUrl.origin,
            { ...transport, connections: 2 },
            { setting: 'source.auth.tokenUrl', clock: deps.clock },
          ),
          clock: deps.clock,
          logger: deps.logger,
          redactor: deps.redactor,
        },
      );
    }
  }
}

function readCa(caFile: string | undefined, configFile: string | undefined): string | undefined {
  if (caFile === undefined) return undefined;
  const file = resolve(configFile === undefined ? '.' : dirname(configFile), caFile);
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`source.caFile: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`, {
      cause: error,
    });
  }
}
