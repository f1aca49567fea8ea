import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load-config.js';
import type { AuthConfig } from '../config/source-schema.js';
import { UsageError } from '../errors.js';
import type { PlatformClient } from '../http/platform-client.js';
import { createPlatformClient } from '../connect/index.js';
import { createLogger } from '../log.js';
import { EXIT } from './exit-codes.js';
import { withUsage } from './parse-flags.js';

export const AUTH_USAGE = `Usage: bulk-extract auth <status|logout> --config FILE [--json]

  status   Who the configured credential belongs to, and whether the platform accepts it.
           API keys and cookie sessions ask GET /login/status; tokens and OAuth clients make
           one cheap authenticated request (GET {baseUrl}/assets?limit=1).
  logout   End the cookie session of source.auth (type: cookie) with GET /logout.

Exit codes: 0 the credential works (logged out), 3 refused, 1 the platform could not be reached,
2 usage or config error.
`;

export interface AuthStatus {
  mechanism: string;
  user: string;
  project: string;
  projectId?: number;
  apiKeyId?: number;
  works: boolean;
  detail: string;
}

export async function runAuth(argv: string[]): Promise<number> {
  const { values, positionals } = withUsage(AUTH_USAGE, () =>
    parseArgs({ args: argv, strict: true, allowPositionals: true, options: FLAGS }),
  );
  const action = positionals[0];
  if (values.help || action === undefined) {
    console.log(AUTH_USAGE);
    return action === undefined && !values.help ? EXIT.USAGE : EXIT.OK;
  }
  if (action !== 'status' && action !== 'logout') throw new UsageError(`unknown action '${action}'.\n\n${AUTH_USAGE}`);
  if (values.config === undefined) throw new UsageError(`--config FILE is required.\n\n${AUTH_USAGE}`);
  const config = loadConfig(values.config);
  const { redactor } = config;
  const logger = createLogger(values['log-level'], undefined, undefined, redactor);
  // The job's sensitive values (a project name from a secret-looking variable) never show.
  const print = (text: string) => console.log(redactor.redact(text));
  return redactor.guard(async () => {
    const client = createPlatformClient(config.source, { logger, configFile: config.file, redactor });
    try {
      return await authAction(action, client, config.source.auth, values.json, print);
    } finally {
      await client.close();
    }
  });
}

async function authAction(
  action: 'status' | 'logout',
  client: PlatformClient,
  auth: AuthConfig,
  json: boolean,
  print: (text: string) => void,
): Promise<number> {
  if (action === 'logout') {
    if (auth.type !== 'cookie') {
      throw new UsageError(`auth logout ends cookie sessions; source.auth.type is '${auth.type}', which has no session to end.`);
    }
    const status = await client.logout();
    print(json ? JSON.stringify(status) : `Logged out${status.user ? ` ${status.user}` : ''}.`);
    return EXIT.OK;
  }
  const status = await authStatus(client, auth);
  print(json ? JSON.stringify(status) : formatStatus(status));
  return status.works ? EXIT.OK : EXIT.AUTH;
}

/** Asks the platform about the configured credential; a refused credential is `works: false`. */
export async function authStatus(
  client: PlatformClient,
  auth: { type: string; clientId?: string },
): Promise<AuthStatus> {
  const project = /\/projects\/([^/]+)/.exec(client.baseUrl.pathname)?.[1] ?? '';
  if (auth.type === 'api-key' || auth.type === 'cookie') {
    const status = await client.loginStatus();
    const sameProject = status.project === '' || status.project === project;
    return {
      mechanism: auth.type,
      user: status.user,
      project: status.project || project,
      projectId: status.projectId,
      ...(status.apiKeyId === undefined ? {} : { apiKeyId: status.apiKeyId }),
      works: status.loggedIn && sameProject,
      detail: !status.loggedIn
        ? 'GET /login/status: not logged in (the credential is unknown, expired or logged out)'
        : sameProject
          ? 'GET /login/status: logged in'
          : `the credential belongs to project '${status.project}', but source.baseUrl names '${project}'`,
    };
  }
  const started = performance.now();
  const response = await client.get('/assets', [['limit', '1']]);
  return {
    mechanism: auth.type,
    user: auth.clientId ?? '(tokens do not name their user here)',
    project,
    works: true,
    detail: `GET ${response.path} answered 200 in ${Math.round(performance.now() - started)} ms`,
  };
}

function formatStatus(status: AuthStatus): string {
  const rows: [string, string][] = [
    ['mechanism', status.mechanism],
    ['user', status.user || '(none)'],
    ['project', (status.projectId ?? -1) < 0 ? status.project : `${status.project} (id ${status.projectId})`],
    ...(status.apiKeyId === undefined ? [] : [['api key id', String(status.apiKeyId)] as [string, string]]),
    ['works', `${status.works ? 'yes' : 'NO'}: ${status.detail}`],
  ];
  return rows.map(([key, value]) => `${key.padEnd(10)} ${value}`).join('\n');
}

const FLAGS = {
  'config': { type: 'string', short: 'c' },
  'json': { type: 'boolean', default: false },
  'log-level': { type: 'string', default: 'warn' },
  'help': { type: 'boolean', short: 'h' },
} as const;
