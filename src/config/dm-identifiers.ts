/**
 * The data-modeling service's identifiers, as its API states their patterns (the official SDK's
 * types carry them): spaces, the externalIds of views and containers, view versions and property
 * identifiers. A name the pattern refuses cannot exist on the platform, so the job file refuses it
 * when it is read instead of a run failing on a 400.
 */
import { z } from 'zod';

/** 1 to 43 characters; `space`, `cdf`, `dms`, `pg3`, `shared`, `system`, `node` and `edge` are reserved. */
const SPACE = /^[a-zA-Z][a-zA-Z0-9_-]{0,41}[a-zA-Z0-9]?$/;
const RESERVED_SPACES = new Set(['space', 'cdf', 'dms', 'pg3', 'shared', 'system', 'node', 'edge']);
/** A view's or container's externalId, and a property identifier: 1 to 255 characters. */
const IDENTIFIER = /^[a-zA-Z]([a-zA-Z0-9_]{0,253}[a-zA-Z0-9])?$/;
/** 1 to 43 characters. */
const VERSION = /^[a-zA-Z0-9]([.a-zA-Z0-9_-]{0,41}[a-zA-Z0-9])?$/;

export const SPACE_EXPECTED = 'a space: a letter, then at most 42 letters, digits, _ or -';
export const EXTERNAL_ID_EXPECTED = 'an externalId: a letter, then at most 254 letters, digits or _, not ending in _';
export const VERSION_EXPECTED = 'a version: a letter or digit, then at most 42 letters, digits, ., _ or -, ending in a letter or digit';
export const PROPERTY_EXPECTED = 'a property identifier: a letter, then at most 254 letters, digits or _, not ending in _';
export const INSTANCE_EXTERNAL_ID_EXPECTED = 'an instance externalId: 1 to 256 characters, no NUL';

/** What is wrong with `value` as a space, or undefined when it is one. */
export function spaceProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || !SPACE.test(value)) return `expected ${SPACE_EXPECTED}`;
  if (RESERVED_SPACES.has(value)) return `'${value}' is a reserved name, not a space that can exist`;
  return undefined;
}

export function externalIdProblem(value: unknown): string | undefined {
  return typeof value === 'string' && IDENTIFIER.test(value) ? undefined : `expected ${EXTERNAL_ID_EXPECTED}`;
}

export function versionProblem(value: unknown): string | undefined {
  return typeof value === 'string' && VERSION.test(value) ? undefined : `expected ${VERSION_EXPECTED}`;
}

export function propertyProblem(value: unknown): string | undefined {
  return typeof value === 'string' && IDENTIFIER.test(value) ? undefined : `expected ${PROPERTY_EXPECTED}`;
}

/** An instance's externalId: 1 to 256 characters, no NUL (the platform's pattern `^[^\\x00]{1,256}$`). */
export function instanceExternalIdProblem(value: unknown): string | undefined {
  const fits = typeof value === 'string' && value !== '' && [...value].length <= 256 && !value.includes('\u0000');
  return fits ? undefined : `expected ${INSTANCE_EXTERNAL_ID_EXPECTED}`;
}

/** A zod string checked by one of the functions above. */
const checked = (problem: (value: unknown) => string | undefined) =>
  z.string().superRefine((value, ctx) => {
    const message = problem(value);
    if (message !== undefined) ctx.addIssue({ code: 'custom', message });
  });

export const spaceId = checked(spaceProblem);
export const externalId = checked(externalIdProblem);
export const viewVersion = checked(versionProblem);
export const propertyId = checked(propertyProblem);

/** A view, as the job file names it: `{space, externalId, version}`. */
export const viewRefSchema = z.strictObject({ space: spaceId, externalId, version: viewVersion });
export type ViewRef = z.output<typeof viewRefSchema>;
