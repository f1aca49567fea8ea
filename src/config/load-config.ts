import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { ConfigError } from '../errors.js';
import { Redactor } from '../util/redact.js';
import { describeZodIssues } from '../util/zod-issues.js';
import { configProblemsError, withoutConsequences } from './config-problems.js';
import { interpolate } from './interpolate.js';
import { jobKeys, jobProblems, type jobSchema } from './job-schema.js';
import { jobFileHints, meantKey } from './key-hints.js';
import { whatParsedProblems } from './what-parsed.js';
import { z } from 'zod';

/** Command-line flags that override keys of the file, applied before validation. */
export interface ConfigOverrides {
  /** output.dir */
  out?: string | undefined;
  /** source.concurrency */
  concurrency?: number | undefined;
  /** output.formats */
  formats?: string[] | undefined;
  /** metrics.textfile, metrics.pushgateway, metrics.port, metrics.runDeadline */
  metrics?: {
    textfile?: string | undefined;
    pushgateway?: string | undefined;
    port?: number | undefined;
    runDeadline?: string | undefined;
  };
}

export type JobConfig = z.output<typeof jobSchema> & {
  /** Absolute path of the file it was read from; relative paths in it are resolved against its folder. */
  file: string;
  /**
   * Hides the job's sensitive values (its credentials, and the values of variables whose names look
   * secret) in what is printed, logged or written about a run: hand it to the logger and printers.
   */
  redactor: Redactor;
};

/**
 * Reads a job file (YAML, or JSON which is YAML too), substitutes `${ENV}` references, resolves
 * credentials into Secrets and validates it once. Problems are a ConfigError naming the file, and
 * for each problem the key, what was expected and what was found: every unset variable, unreadable
 * credential, credential's variable used in another key and schema issue of the file at once
 * (schema issues under a key whose value could not be resolved are left out: they would only repeat
 * it). The job's sensitive values are [redacted] in the error, as they are in what `redactor` hides.
 * `credentials: 'unused'` is for commands that never talk to the platform (see interpolate).
 */
export function loadConfig(
  path: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  overrides: ConfigOverrides = {},
  credentials: 'required' | 'unused' = 'required',
): JobConfig {
  const file = resolve(path);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`Cannot read config file ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`, {
      cause: error,
    });
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (error) {
    throw new ConfigError(`${file}: not valid YAML or JSON: ${yamlProblem(error, text)}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`${file}: expected a mapping with a 'source' key at the top.`);
  }
  const { value: resolved, problems, sensitive } = interpolate(parsed, { env, baseDir: dirname(file), credentials });
  const redactor = new Redactor(sensitive);
  applyOverrides(resolved as Record<string, unknown>, overrides);
  regionFromEnvironment(resolved as Record<string, unknown>, env);
  const result = jobKeys.safeParse(resolved);
  // What the keys must agree on, on what parsed when not all did: told as the schema's own issues.
  const disagreements = result.success
    ? jobProblems(result.data)
    : whatParsedProblems(resolved, (at, key) => meantKey(resolved, at, key));
  const asIssues = new z.ZodError(disagreements.map(({ path, message }) => ({ code: 'custom' as const, path, message, input: undefined })));
  const hints = jobFileHints(resolved);
  const issues = [
    ...(result.success ? [] : describeZodIssues(result.error, resolved, hints)),
    ...describeZodIssues(asIssues, resolved, hints),
  ];
  if (result.success && issues.length === 0 && problems.length === 0) return { ...result.data, file, redactor };
  throw redactor.redactError(configProblemsError(file, [...problems, ...withoutConsequences(issues, problems)]));
}

/**
 * An s3:// output without output.s3.region takes AWS_REGION of the environment the job is read
 * with, so the store is handed its region instead of reading the environment itself.
 */
function regionFromEnvironment(job: Record<string, unknown>, env: Readonly<Record<string, string | undefined>>): void {
  const region = env.AWS_REGION;
  const output = job.output;
  if (region === undefined || region === '' || !isMapping(output)) return;
  if (typeof output.dir !== 'string' || !output.dir.startsWith('s3://')) return;
  if (output.s3 === undefined) output.s3 = { region };
  else if (isMapping(output.s3) && output.s3.region === undefined) output.s3.region = region;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function applyOverrides(job: Record<string, unknown>, overrides: ConfigOverrides): void {
  const section = (key: string): Record<string, unknown> => {
    const value = job[key];
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
    const created: Record<string, unknown> = {};
    if (value === undefined) job[key] = created;
    return created;
  };
  if (overrides.out !== undefined) section('output').dir = overrides.out;
  if (overrides.formats !== undefined) section('output').formats = overrides.formats;
  if (overrides.concurrency !== undefined) section('source').concurrency = overrides.concurrency;
  for (const [key, value] of Object.entries(overrides.metrics ?? {})) {
    if (value !== undefined) section('metrics')[key] = value;
  }
}

/**
 * What is wrong with the file's YAML and where (line and column), without the excerpt of the line
 * the parser adds: that line may hold a credential written in the file. A `${VAR}` inside `{...}`
 * or `[...]` (where `{` and `}` are YAML's own) gets the fix.
 */
function yamlProblem(error: unknown, text: string): string {
  if (!(error instanceof YAMLParseError)) return 'the parser failed';
  const [what = error.code] = error.message.split('\n');
  const summary = what.replace(/:$/, '');
  const line = error.linePos === undefined ? undefined : text.split(/\r?\n/)[error.linePos[0].line - 1];
  // A flow mapping or sequence on the line, besides the references' own braces.
  const flow = line !== undefined && /\$\{/.test(line) && /[{[]/.test(line.replace(/\$\{[^}]*\}/g, ''));
  const quote = flow ? '; a ${VAR} inside {...} or [...] must be quoted: apiKey: "${API_KEY}"' : '';
  return `${summary}${quote}`;
}
