import { ConfigError } from '../errors.js';
import { formatPath } from '../util/zod-issues.js';

/** One thing wrong with a job file, at a key path of the file as parsed. */
export interface ConfigProblem {
  /** The key as written, e.g. `['source', 'auth', 'clientSecretFile']`; `[]` is the top. */
  path: readonly PropertyKey[];
  /** What is wrong there and what was expected; never a credential. */
  message: string;
  /**
   * Schema issues at or under this path follow from this problem (a value that still holds an
   * unset `${VAR}`, a credential that could not be read) and are left out. Default: `path`.
   */
  covers?: readonly PropertyKey[];
  cause?: unknown;
}

/** True when `path` is `prefix` or a key below it. */
export function isAtOrUnder(path: readonly PropertyKey[], prefix: readonly PropertyKey[]): boolean {
  return prefix.length <= path.length && prefix.every((key, i) => String(key) === String(path[i]));
}

/** Schema issues that are not consequences of an earlier problem (see ConfigProblem.covers). */
export function withoutConsequences(
  issues: readonly ConfigProblem[],
  earlier: readonly ConfigProblem[],
): ConfigProblem[] {
  return issues.filter((issue) => !earlier.some((problem) => isAtOrUnder(issue.path, problem.covers ?? problem.path)));
}

/**
 * One ConfigError for every problem of a file. One problem is one line, `<file>: <path>: <message>`;
 * several are a header line, `<file>: 3 problems:`, then `  - <path>: <message>` each.
 */
export function configProblemsError(file: string, problems: readonly ConfigProblem[]): ConfigError {
  const lines = problems.map((problem) => `${formatPath(problem.path)}: ${problem.message}`);
  const message =
    lines.length === 1
      ? `${file}: ${lines[0]}`
      : `${file}: ${lines.length} problems:\n${lines.map((line) => `  - ${line}`).join('\n')}`;
  const causes = problems.flatMap((problem) => (problem.cause === undefined ? [] : [problem.cause]));
  if (causes.length === 0) return new ConfigError(message);
  return new ConfigError(message, { cause: causes.length === 1 ? causes[0] : new AggregateError(causes) });
}
