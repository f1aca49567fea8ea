import { isRecord, shown } from '../filter-object.js';
import type { ViewDefinition } from './core-model.js';
import { findView, viewProperties } from './model-lookup.js';
import type { SelectedSource } from './view-json.js';

/**
 * The parts the bodies of `/models/...` share, validated the way the platform validates bodies:
 * strictly, each refusal naming its path in the body (`with.assets.limit`, `sources[0].source`).
 * A parser throws `Invalid`; `attempt` turns it into the message of a 400.
 */
export class Invalid extends Error {}

export function invalid(path: string, problem: string): never {
  throw new Invalid(`Invalid property '${path}': ${problem}`);
}

/** The same for a query parameter of a GET. */
export function invalidParameter(name: string, problem: string): never {
  throw new Invalid(`Invalid query parameter '${name}': ${problem}`);
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

export function attempt<T>(parse: () => T): Parsed<T> {
  try {
    return { ok: true, value: parse() };
  } catch (error) {
    if (error instanceof Invalid) return { ok: false, message: error.message };
    throw error;
  }
}

/**
 * An object whose keys are among `allowed`; a key of `notServed` (which the platform takes and the
 * simulator does not serve) is refused as such, unless its value is in `harmless` (e.g. `sort: []`).
 */
export function objectAt(
  given: unknown,
  path: string,
  allowed: readonly string[],
  notServed: readonly string[] = [],
  harmless: (key: string, value: unknown) => boolean = () => false,
): Record<string, unknown> {
  if (!isRecord(given)) {
    if (path === '') throw new Invalid(`The request body must be a JSON object, got ${shown(given)}.`);
    return invalid(path, `expected an object, got ${shown(given)}.`);
  }
  for (const [key, value] of Object.entries(given)) {
    if (value === undefined || harmless(key, value)) continue;
    if (notServed.includes(key)) return invalid(join(path, key), 'the platform takes it; the simulator does not serve it.');
    if (!allowed.includes(key)) return invalid(join(path, key), `unrecognized. Allowed: ${allowed.join(', ')}.`);
  }
  return given;
}

/** `path.key`, or `key` at the top of a body. */
export function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

export function integerAt(given: unknown, path: string, min: number, max: number, fallback: number): number {
  if (given === undefined) return fallback;
  if (typeof given !== 'number' || !Number.isInteger(given) || given < min || given > max) {
    return invalid(path, `expected an integer in ${min}..${max}, got ${shown(given)}.`);
  }
  return given;
}

export function booleanAt(given: unknown, path: string, fallback: boolean): boolean {
  if (given === undefined) return fallback;
  return typeof given === 'boolean' ? given : invalid(path, `expected true or false, got ${shown(given)}.`);
}

export function stringAt(given: unknown, path: string): string {
  return typeof given === 'string' && given !== '' ? given : invalid(path, `expected a non-empty string, got ${shown(given)}.`);
}

export function oneOfAt<T extends string>(given: unknown, path: string, values: readonly T[], fallback: T): T {
  if (given === undefined) return fallback;
  const found = values.find((value) => value === given);
  return found ?? invalid(path, `expected one of ${values.join(', ')}, got ${shown(given)}.`);
}

/** A view reference `{type: "view", space, externalId, version}` of a view the simulator has. */
export function viewAt(given: unknown, path: string): ViewDefinition {
  const ref = objectAt(given, path, ['type', 'space', 'externalId', 'version']);
  if (ref.type !== 'view') return invalid(join(path, 'type'), `expected "view", got ${shown(ref.type)}.`);
  const space = stringAt(ref.space, join(path, 'space'));
  const externalId = stringAt(ref.externalId, join(path, 'externalId'));
  const version = stringAt(ref.version, join(path, 'version'));
  return findView({ space, externalId, version }) ?? invalid(path, `view ${space}:${externalId}/${version} does not exist.`);
}

/**
 * `sources` of a list, or of a sync's `select`: `[{source, properties?}]`, at most 10. `properties`
 * (`["*"]` or names) is taken where `withProperties`; without it every property is returned.
 */
export function sourcesAt(given: unknown, path: string, withProperties: boolean): SelectedSource[] {
  if (given === undefined) return [];
  if (!Array.isArray(given) || given.length > 10) return invalid(path, `expected an array of at most 10 sources, got ${shown(given)}.`);
  return given.map((entry, i) => {
    const at = `${path}[${i}]`;
    const allowed = withProperties ? ['source', 'properties'] : ['source'];
    const source = objectAt(entry, at, allowed, ['targetUnits']);
    const view = viewAt(source.source, `${at}.source`);
    const all = viewProperties(view);
    if (!withProperties) return { view, properties: all };
    const names = source.properties;
    if (!Array.isArray(names) || names.length === 0 || !names.every((name) => typeof name === 'string')) {
      return invalid(`${at}.properties`, `expected ["*"] or property names, got ${shown(names)}.`);
    }
    if (names.includes('*')) return { view, properties: all };
    return {
      view,
      properties: names.map((name, k) =>
        all.find((p) => p.identifier === name) ?? invalid(`${at}.properties[${k}]`, `view ${view.externalId} has no property '${name}'.`)),
    };
  });
}
