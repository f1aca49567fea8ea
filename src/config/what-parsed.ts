/**
 * The rules over several keys of a job file (jobProblems), run on the parts of a file that parsed,
 * so that one message names a wrong type and a disagreement of keys elsewhere at once.
 */
import { isAtOrUnder } from './config-problems.js';
import { jobKeys, jobProblems, RESOURCES } from './job-schema.js';
import { type ApplyRules, type KeyProblem, problemsOf } from './key-rules.js';

type Path = readonly PropertyKey[];

/** The job's keys with `source` optional: the rules read none of it, so a broken source leaves them all. */
const salvageable = jobKeys.extend({ source: jobKeys.shape.source.optional() });

/** What stands for a stream that cannot be parsed: every rule that reads it is left out. */
const PLACEHOLDER_STREAM = { resource: RESOURCES[0] };

/** Parses of the file before giving up: each removes a key at least, and a file has few problems. */
const MOST_PASSES = 50;

/**
 * The problems of the rules over several keys (jobProblems) of a file that does not parse, on what
 * parsed: each key whose value has an issue is taken out (its default takes its place), a stream
 * that cannot be parsed at all is taken out whole, and the file is parsed again, until it parses.
 * A rule that reads a key taken out is left out: it would judge a value the file does not have.
 *
 * An unknown key with a known key close to it (`meant`, the "did you mean") is read as that key, so
 * that a typo does not also bring the problems of the key missing (`granularty` is not reported as
 * well as "aggregates need a granularity"). Never throws, whatever the input's shape.
 */
export function whatParsedProblems(
  input: unknown,
  meant: (path: Path, key: string) => string | undefined,
): KeyProblem[] {
  if (!isMapping(input)) return [];
  const file = copy(input) as Record<string, unknown>;
  const removed: Path[] = [];
  for (let pass = 0; pass < MOST_PASSES; pass++) {
    const result = salvageable.safeParse(file);
    if (result.success) {
      const { apply, watch } = tracked(removed);
      return jobProblems(watch(result.data, []) as typeof result.data, apply);
    }
    const before = removed.length;
    let renamed = false;
    for (const issue of result.error.issues) {
      if (issue.code === 'unrecognized_keys') renamed = readAsMeant(file, issue.path, issue.keys, meant, removed) || renamed;
      else takeOut(file, issue.path, removed);
    }
    if (removed.length === before && !renamed) return [];
  }
  return [];
}

/** Each unknown key renamed to the key meant when there is one and it is not given too; else taken out. */
function readAsMeant(
  file: Record<string, unknown>,
  path: Path,
  keys: readonly string[],
  meant: (path: Path, key: string) => string | undefined,
  removed: Path[],
): boolean {
  const object = valueAt(file, path);
  if (!isMapping(object)) return false;
  let renamed = false;
  for (const key of keys) {
    const known = meant(path, key);
    if (known !== undefined && !Object.hasOwn(object, known)) {
      object[known] = object[key];
      renamed = true;
    } else {
      removed.push([...path, key]);
    }
    delete object[key];
  }
  return renamed;
}

/**
 * Takes out the value an issue is about: the nearest key at or above its path that holds a value
 * (a key missing takes out what holds it), a list whole (what a rule reads of a list is all of it:
 * its length, its entries), a stream for a placeholder (the other streams keep their places).
 */
function takeOut(file: Record<string, unknown>, issuePath: Path, removed: Path[]): void {
  let path = [...issuePath];
  while (path.length > 0) {
    const parent = valueAt(file, path.slice(0, -1));
    const key = path.at(-1)!;
    const isStream = path.length === 2 && path[0] === 'streams';
    if (Array.isArray(parent) && !isStream) {
      path = path.slice(0, -1);
      continue;
    }
    if (isStream && Array.isArray(parent) && parent[Number(key)] !== undefined) {
      parent[Number(key)] = { ...PLACEHOLDER_STREAM };
      if (!removed.some((done) => isAtOrUnder(path, done))) removed.push(path);
      return;
    }
    if (isMapping(parent) && Object.hasOwn(parent, String(key))) {
      delete parent[String(key)];
      removed.push(path);
      return;
    }
    path = path.slice(0, -1);
  }
}

/**
 * Rules applied to values seen through proxies (`watch`, from the job down) that note every read of
 * a key taken out, and every listing of the keys of what held one: a rule that made such a read is
 * left out.
 */
function tracked(removed: readonly Path[]): { apply: ApplyRules; watch: (value: unknown, path: Path) => unknown } {
  const reads = { tainted: 0 };
  const watch = (value: unknown, path: Path): unknown => {
    if (!isPlain(value)) return value;
    const taken = (key: PropertyKey) => removed.some((done) => isAtOrUnder([...path, key], done));
    return new Proxy(value, {
      get(target, key, receiver) {
        const found: unknown = Reflect.get(target, key, receiver);
        if (typeof key === 'symbol') return found;
        // A frozen value must be answered as it is (a proxy's invariant).
        const own = Reflect.getOwnPropertyDescriptor(target, key);
        if (own !== undefined && own.configurable === false && own.writable === false) return found;
        if (taken(key)) reads.tainted++;
        return watch(found, [...path, key]);
      },
      has(target, key) {
        if (typeof key !== 'symbol' && taken(key)) reads.tainted++;
        return Reflect.has(target, key);
      },
      ownKeys(target) {
        if (removed.some((done) => done.length > path.length && isAtOrUnder(done, path))) reads.tainted++;
        return Reflect.ownKeys(target);
      },
    });
  };
  const apply: ApplyRules = (value, rules) =>
    rules.flatMap((rule) => {
      const before = reads.tainted;
      const problems = problemsOf(rule, value);
      return reads.tainted === before ? problems : [];
    });
  return { apply, watch };
}

function copy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copy);
  if (!isPlain(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, copy(inner)]));
}

function valueAt(value: unknown, path: Path): unknown {
  let at = value;
  for (const key of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}

/** A mapping or list as parsed from YAML (not a Secret or another class's object). */
function isPlain(value: unknown): value is Record<PropertyKey, unknown> {
  if (Array.isArray(value)) return true;
  if (value === null || typeof value !== 'object') return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return isPlain(value) && !Array.isArray(value);
}
