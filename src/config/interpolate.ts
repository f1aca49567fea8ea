import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { Secret } from './secret.js';

/** Keys whose values are credentials: they come from `${ENV_VAR}` or from `<key>File`, never literally. */
export const SECRET_KEYS: ReadonlySet<string> = new Set(['apiKey', 'token', 'clientSecret', 'cookie']);

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const ONLY_REFERENCE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

export interface InterpolationContext {
  env: Readonly<Record<string, string | undefined>>;
  /** Directory that relative `*File` paths are resolved against (the config file's). */
  baseDir: string;
}

/**
 * Replaces `${VAR}` in every string of a parsed config with the environment's value (`$${` stays a
 * literal `${`), and turns credentials into Secrets: `apiKey: ${VAR}` or `apiKeyFile: path` (same
 * for token, clientSecret, cookie). A literal credential in the file is refused.
 */
export function interpolate(value: unknown, ctx: InterpolationContext, path = ''): unknown {
  if (typeof value === 'string') return substitute(value, ctx, path);
  if (Array.isArray(value)) return value.map((item, i) => interpolate(item, ctx, `${path}[${i}]`));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(value)) {
    const at = path === '' ? key : `${path}.${key}`;
    const secretKey = key.endsWith('File') ? key.slice(0, -4) : key;
    if (SECRET_KEYS.has(secretKey)) {
      if (secretKey in out) throw new ConfigError(`${at}: give ${secretKey} or ${secretKey}File, not both.`);
      out[secretKey] = key === secretKey ? secretFromEnv(raw, ctx, at) : secretFromFile(raw, ctx, at);
    } else {
      out[key] = interpolate(raw, ctx, at);
    }
  }
  return out;
}

function substitute(text: string, ctx: InterpolationContext, path: string): string {
  return text
    .split('$${')
    .map((part) =>
      part.replace(REFERENCE, (_, name: string) => {
        const value = ctx.env[name];
        if (value === undefined) throw new ConfigError(`${path}: environment variable ${name} is not set.`);
        return value;
      }),
    )
    .join('${');
}

function secretFromEnv(raw: unknown, ctx: InterpolationContext, path: string): Secret {
  const name = typeof raw === 'string' ? ONLY_REFERENCE.exec(raw.trim())?.[1] : undefined;
  if (name === undefined) {
    throw new ConfigError(
      `${path}: credentials are not written in the config file. Use an environment variable (${path.split('.').pop()}: \${MY_VARIABLE}) or a file (${path.split('.').pop()}File: /run/secrets/name).`,
    );
  }
  const value = ctx.env[name];
  if (value === undefined || value === '') {
    throw new ConfigError(`${path}: environment variable ${name} is not set or empty.`);
  }
  return new Secret(value);
}

function secretFromFile(raw: unknown, ctx: InterpolationContext, path: string): Secret {
  if (typeof raw !== 'string' || raw === '') throw new ConfigError(`${path}: expected a file path.`);
  const file = resolve(ctx.baseDir, substitute(raw, ctx, path));
  let value: string;
  try {
    value = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new ConfigError(`${path}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`, {
      cause: error,
    });
  }
  if (value === '') throw new ConfigError(`${path}: ${file} is empty.`);
  return new Secret(value);
}
