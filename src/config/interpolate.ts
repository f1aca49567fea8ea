import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ConfigProblem } from './config-problems.js';
import { Secret } from '../util/secret.js';

/** Keys whose values are credentials: they come from `${ENV_VAR}` or from `<key>File`, never literally. */
export const SECRET_KEYS: ReadonlySet<string> = new Set(['apiKey', 'token', 'clientSecret', 'cookie']);

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const ONLY_REFERENCE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

export interface InterpolationContext {
  env: Readonly<Record<string, string | undefined>>;
  /** Directory that relative `*File` paths are resolved against (the config file's). */
  baseDir: string;
}

export interface Interpolated {
  /** The config with every reference that could be resolved substituted; unset ones stay `${VAR}`. */
  value: unknown;
  /** Every reference that could not be resolved and every credential that could not be read. */
  problems: ConfigProblem[];
}

type Path = readonly PropertyKey[];

interface Walk extends InterpolationContext {
  problems: ConfigProblem[];
}

/**
 * Replaces `${VAR}` in every string of a parsed config with the environment's value (`$${` stays a
 * literal `${`), and turns credentials into Secrets: `apiKey: ${VAR}` or `apiKeyFile: path` (same
 * for token, clientSecret, cookie). A literal credential in the file is refused. Goes on past a
 * problem, so that one error can name them all.
 */
export function interpolate(value: unknown, ctx: InterpolationContext): Interpolated {
  const walk: Walk = { ...ctx, problems: [] };
  return { value: visit(value, [], walk), problems: walk.problems };
}

function visit(value: unknown, path: Path, walk: Walk): unknown {
  if (typeof value === 'string') return substitute(value, path, walk);
  if (Array.isArray(value)) return value.map((item, i) => visit(item, [...path, i], walk));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  const given = new Set<string>();
  for (const [key, raw] of Object.entries(value)) {
    const at = [...path, key];
    const secretKey = key.endsWith('File') ? key.slice(0, -4) : key;
    if (!SECRET_KEYS.has(secretKey)) {
      out[key] = visit(raw, at, walk);
      continue;
    }
    const covers = [...path, secretKey];
    if (given.has(secretKey)) {
      walk.problems.push({ path: at, covers, message: `give ${secretKey} or ${secretKey}File, not both` });
      continue;
    }
    given.add(secretKey);
    const secret = key === secretKey ? secretFromEnv(raw, at, walk) : secretFromFile(raw, at, covers, walk);
    if (secret !== undefined) out[secretKey] = secret;
  }
  return out;
}

function substitute(text: string, path: Path, walk: Walk, covers: Path = path): string {
  return text
    .split('$${')
    .map((part) =>
      part.replace(REFERENCE, (reference, name: string) => {
        const value = walk.env[name];
        if (value !== undefined) return value;
        walk.problems.push({ path, covers, message: `environment variable ${name} is not set` });
        return reference;
      }),
    )
    .join('${');
}

function secretFromEnv(raw: unknown, path: Path, walk: Walk): Secret | undefined {
  const key = String(path.at(-1));
  const name = typeof raw === 'string' ? ONLY_REFERENCE.exec(raw.trim())?.[1] : undefined;
  if (name === undefined) {
    walk.problems.push({
      path,
      message: `credentials are not written in the config file. Use an environment variable (${key}: \${MY_VARIABLE}) or a file (${key}File: /run/secrets/name)`,
    });
    return undefined;
  }
  const value = walk.env[name];
  if (value === undefined || value === '') {
    walk.problems.push({ path, message: `environment variable ${name} is not set or empty` });
    return undefined;
  }
  return new Secret(value);
}

function secretFromFile(raw: unknown, path: Path, covers: Path, walk: Walk): Secret | undefined {
  const problem = (message: string, cause?: unknown): undefined => {
    walk.problems.push({ path, covers, message, ...(cause === undefined ? {} : { cause }) });
    return undefined;
  };
  if (typeof raw !== 'string' || raw === '') return problem('expected a file path');
  const before = walk.problems.length;
  const name = substitute(raw, path, walk, covers);
  if (walk.problems.length > before) return undefined;
  const file = resolve(walk.baseDir, name);
  let value: string;
  try {
    value = readFileSync(file, 'utf8').trim();
  } catch (error) {
    return problem(`cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`, error);
  }
  if (value === '') return problem(`${file} is empty`);
  return new Secret(value);
}
