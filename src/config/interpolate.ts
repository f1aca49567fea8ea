import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ConfigProblem } from './config-problems.js';
import { Secret } from '../util/secret.js';
import { formatPath } from '../util/zod-issues.js';

/** Keys whose values are credentials: they come from `${ENV_VAR}` or from `<key>File`, never literally. */
export const SECRET_KEYS: ReadonlySet<string> = new Set(['apiKey', 'token', 'clientSecret', 'cookie']);

/**
 * Names of variables that look like they hold a secret. One may be used in any key (PARTITION_KEY
 * is a fine name for a filter value), but its value is redacted wherever a message shows it.
 */
export const SECRET_LOOKING_NAME = /SECRET|TOKEN|KEY|PASSWORD|PASSWD|CREDENTIAL|COOKIE/i;

const CREDENTIAL_RULE = `a credential goes only in a credential key (${[...SECRET_KEYS].join(', ')})`;

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const ONLY_REFERENCE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

export interface InterpolationContext {
  env: Readonly<Record<string, string | undefined>>;
  /** Directory that relative `*File` paths are resolved against (the config file's). */
  baseDir: string;
  /**
   * 'unused': the caller never talks to the platform (`status`, `verify`), so a credential whose
   * variable is unset or whose file cannot be read is not a problem; it is an empty Secret.
   * A credential written literally in the file is refused all the same. Default 'required'.
   */
  credentials?: 'required' | 'unused';
}

export interface Interpolated {
  /** The config with every reference that could be resolved substituted; unset ones stay `${VAR}`. */
  value: unknown;
  /**
   * Every reference that could not be resolved, every credential that could not be read, and every
   * use of a credential's variable in another key.
   */
  problems: ConfigProblem[];
  /**
   * Values never to be shown in a message: every credential (from its variable or its file) and
   * the value of every variable used whose name looks secret (SECRET_LOOKING_NAME).
   */
  sensitive: string[];
}

type Path = readonly PropertyKey[];

interface Walk extends InterpolationContext {
  problems: ConfigProblem[];
  sensitive: Set<string>;
  /** The variables of credential keys (`clientSecret: ${CLIENT_SECRET}`), each with its key. */
  credentialVariables: ReadonlyMap<string, Path>;
}

/**
 * Replaces `${VAR}` in every string of a parsed config with the environment's value (`$${` stays a
 * literal `${`), and turns credentials into Secrets: `apiKey: ${VAR}` or `apiKeyFile: path` (same
 * for token, clientSecret, cookie). A literal credential in the file is refused, and so is a
 * credential's variable (or another variable holding the same value) in any other key: there it
 * would go into a request, a log line or a file. Goes on past a problem, so that one error can name
 * them all; a reference refused or unset stays as written.
 */
export function interpolate(value: unknown, ctx: InterpolationContext): Interpolated {
  const credentialVariables = new Map<string, Path>();
  findCredentialVariables(value, [], credentialVariables);
  const walk: Walk = { ...ctx, problems: [], sensitive: new Set(), credentialVariables };
  return { value: visit(value, [], walk), problems: walk.problems, sensitive: [...walk.sensitive] };
}

/** Collects the variables that credential keys name, wherever they are in the file. */
function findCredentialVariables(value: unknown, path: Path, found: Map<string, Path>): void {
  if (Array.isArray(value)) value.forEach((item, i) => findCredentialVariables(item, [...path, i], found));
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
  for (const [key, raw] of Object.entries(value)) {
    const name = SECRET_KEYS.has(key) && typeof raw === 'string' ? ONLY_REFERENCE.exec(raw.trim())?.[1] : undefined;
    if (name !== undefined && !found.has(name)) found.set(name, [...path, key]);
    else findCredentialVariables(raw, [...path, key], found);
  }
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
        const misuse = credentialMisuse(name, walk);
        if (misuse !== undefined) {
          if (!walk.problems.some((p) => p.path === path && p.message === misuse)) {
            walk.problems.push({ path, covers, message: misuse });
          }
          return reference;
        }
        const value = walk.env[name];
        if (value === undefined) {
          walk.problems.push({ path, covers, message: `environment variable ${name} is not set` });
          return reference;
        }
        if (SECRET_LOOKING_NAME.test(name)) walk.sensitive.add(value);
        return value;
      }),
    )
    .join('${');
}

/**
 * What is wrong with `${name}` outside a credential key: it is a credential key's variable. Names
 * the variable and the key, never the value. (Another variable that happens to hold the same value
 * is not refused: placeholders and test environments give many variables one value. The value is
 * hidden in every message all the same, as a credential's.)
 */
function credentialMisuse(name: string, walk: Walk): string | undefined {
  const key = walk.credentialVariables.get(name);
  return key === undefined ? undefined : `uses \${${name}}, the variable of ${formatPath(key)}; ${CREDENTIAL_RULE}`;
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
  if ((value === undefined || value === '') && walk.credentials === 'unused') return new Secret('');
  if (value === undefined || value === '') {
    walk.problems.push({ path, message: `environment variable ${name} is not set or empty` });
    return undefined;
  }
  walk.sensitive.add(value);
  return new Secret(value, `the environment variable ${name}`);
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
  if (walk.credentials === 'unused') return new Secret('');
  let value: string;
  try {
    value = readFileSync(file, 'utf8').trim();
  } catch (error) {
    return problem(`cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`, error);
  }
  if (value === '') return problem(`${file} is empty`);
  walk.sensitive.add(value);
  return new Secret(value, `the file ${file}`);
}
