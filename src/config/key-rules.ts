/** Where keys of one part of a job file disagree: a path relative to that part, and what is wrong. */
export interface KeyProblem {
  path: (string | number)[];
  message: string;
}

/**
 * One rule over the keys of a part of a job file (a stream, the job): its problems, none when the
 * keys agree. A rule reads only the keys it judges, so that one whose keys did not all parse can be
 * left out (whatParsedProblems): it would judge a value the file does not have.
 */
export type KeyRule<T> = (value: T) => KeyProblem | readonly KeyProblem[] | undefined;

/** How rules are applied to a value: all of them (a file that parsed), or those whose keys parsed. */
export type ApplyRules = <T>(value: T, rules: readonly KeyRule<T>[]) => KeyProblem[];

/** Every rule, on a value whose keys all parsed. */
export const applyAll: ApplyRules = (value, rules) => rules.flatMap((rule) => problemsOf(rule, value));

/** A rule's problems as a list. */
export function problemsOf<T>(rule: KeyRule<T>, value: T): KeyProblem[] {
  const found = rule(value);
  if (found === undefined) return [];
  return Array.isArray(found) ? [...(found as readonly KeyProblem[])] : [found as KeyProblem];
}

/** The problems at paths relative to `prefix` (a stream's), made relative to the part above it. */
export function under(prefix: readonly (string | number)[], problems: readonly KeyProblem[]): KeyProblem[] {
  return problems.map(({ path, message }) => ({ path: [...prefix, ...path], message }));
}

/** `keep` counts completed snapshots: a rule of every kind of stream. */
export const keepNeedsSnapshot: KeyRule<{ keep?: number | undefined; mode: string }> = (stream) =>
  stream.keep !== undefined && stream.mode !== 'snapshot'
    ? {
        path: ['keep'],
        message: `keep applies to mode: snapshot (completed snapshots to keep); this stream's mode is ${stream.mode}`,
      }
    : undefined;
