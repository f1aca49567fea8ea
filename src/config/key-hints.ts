import type { IssueHints } from '../util/zod-issues.js';
import { SECRET_KEYS } from './interpolate.js';
import { jobSchema, RESOURCES } from './job-schema.js';
import { knownKeysAt } from './known-keys.js';
import { suggestKey } from './suggest-key.js';

/** What a stream's `resource` may be: a collection, datapoints or instances. */
const STREAM_RESOURCES: readonly string[] = [...RESOURCES, 'datapoints', 'instances'];

/**
 * The hints of a job file's schema issues, given the file as parsed. An unknown key gets the known
 * key closest to it at its place (credentials' `*File` forms included); a stream's key that other
 * kinds of stream take says which (`isString` on events: "a timeseries filter"); a value that is
 * none of those allowed gets the closest one (`resource: timeSeries`: "did you mean timeseries").
 */
export function jobFileHints(input: unknown): IssueHints {
  return {
    unknownKey: (path, key) => unknownKeyHint(input, path, key),
    unknownValue: (value, allowed) => {
      const meant = suggestKey(value, allowed);
      return meant === undefined ? undefined : `did you mean ${JSON.stringify(meant)}?`;
    },
  };
}

/**
 * The known key closest to the unknown `key` at `path` of the job file `input` (credentials' `*File`
 * forms included), or undefined when none is close: the key the "did you mean" names.
 */
export function meantKey(input: unknown, path: readonly PropertyKey[], key: string): string | undefined {
  const known = knownKeysAt(jobSchema, input, path);
  return suggestKey(key, [...known, ...known.filter((k) => SECRET_KEYS.has(k)).map((k) => `${k}File`)]);
}

function unknownKeyHint(input: unknown, path: readonly PropertyKey[], key: string): string | undefined {
  const meant = meantKey(input, path, key);
  const stream = streamAt(input, path);
  if (stream === undefined) return meant === undefined ? undefined : `did you mean ${JSON.stringify(meant)}?`;
  if (stream.resource === 'datapoints' && key === 'filter' && stream.rest.length === 0) {
    return 'a datapoints stream takes the time series filters under timeseries: {isString: false, ...}';
  }
  const others = otherStreamKeys(input, stream);
  const takers = others.get(key);
  if (takers !== undefined) {
    const also = meant === undefined ? '' : `; did you mean ${JSON.stringify(meant)}?`;
    return `${stream.resource} streams do not take it: it is ${placeOf(stream, takers)}${also}`;
  }
  if (meant !== undefined) return `did you mean ${JSON.stringify(meant)}?`;
  const near = suggestKey(key, others.keys());
  if (near === undefined) return undefined;
  return `did you mean ${JSON.stringify(near)}? it is ${placeOf(stream, others.get(near) ?? [])}, which ${stream.resource} streams do not take`;
}

/** A place inside the stream `streams[index]` of the job file, and the resource it names. */
interface StreamPlace {
  index: number;
  resource: string;
  /** The path inside the stream: [] for its own keys, ['filter'] for its filter. */
  rest: readonly PropertyKey[];
}

function streamAt(input: unknown, path: readonly PropertyKey[]): StreamPlace | undefined {
  if (path[0] !== 'streams' || path.length < 2 || !isRecord(input) || !Array.isArray(input.streams)) return undefined;
  const index = Number(path[1]);
  const stream: unknown = input.streams[index];
  if (!isRecord(stream) || typeof stream.resource !== 'string' || !STREAM_RESOURCES.includes(stream.resource)) return undefined;
  return { index, resource: stream.resource, rest: path.slice(2) };
}

/**
 * The keys that other kinds of stream take at the same place, each with the kinds that take it. A
 * datapoints stream's series filters (`timeseries:`) and a collection's `filter` are one place.
 */
function otherStreamKeys(input: unknown, stream: StreamPlace): Map<string, string[]> {
  const takers = new Map<string, string[]>();
  const streams = (input as { streams: unknown[] }).streams;
  for (const resource of STREAM_RESOURCES) {
    if (resource === stream.resource) continue;
    const rest = equivalentPlace(stream, resource);
    if (rest === undefined) continue;
    const swapped = streams.map((s, i) => (i === stream.index ? { ...(s as object), resource } : s));
    for (const key of knownKeysAt(jobSchema, { ...(input as object), streams: swapped }, ['streams', stream.index, ...rest])) {
      if (key !== 'resource') takers.set(key, [...(takers.get(key) ?? []), resource]);
    }
  }
  return takers;
}

/**
 * Where `resource` streams have the place `stream.rest`: the same path, but a collection's `filter`
 * is a datapoints stream's `timeseries` (instances have no such filter).
 */
function equivalentPlace(stream: StreamPlace, resource: string): readonly PropertyKey[] | undefined {
  const [first, ...deeper] = stream.rest;
  if (first === undefined) return [];
  const filterPlace = (r: string) => (r === 'datapoints' ? 'timeseries' : r === 'instances' ? undefined : 'filter');
  if (deeper.length === 0 && first === filterPlace(stream.resource)) {
    const place = filterPlace(resource);
    return place === undefined ? undefined : [place];
  }
  return stream.rest;
}

/**
 * `a timeseries filter`, `a filter of assets, files and sequences`, `a key of datapoints streams`. A
 * datapoints stream's series filters are the timeseries filters: said once, as those.
 */
function placeOf(stream: StreamPlace, takers: readonly string[]): string {
  const list = (words: readonly string[]) => (words.length === 1 ? words[0]! : `${words.slice(0, -1).join(', ')} and ${words.at(-1)!}`);
  const kinds = takers.length === STREAM_RESOURCES.length - 1 ? 'every other kind of stream' : `${list(takers)} streams`;
  if (stream.rest.length === 0) return `a key of ${kinds}`;
  const filter = stream.rest.length === 1 && (stream.rest[0] === 'filter' || stream.rest[0] === 'timeseries');
  if (!filter) return `a key of ${kinds} there`;
  const named = takers.includes('timeseries') ? takers.filter((taker) => taker !== 'datapoints') : takers;
  if (named.length === 1 && named[0] === 'datapoints') return "a key of a datapoints stream's timeseries:";
  if (named.length > 1) return `a filter of ${list(named)}`;
  return `${/^[aeiou]/.test(named[0]!) ? 'an' : 'a'} ${named[0]!} filter`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
