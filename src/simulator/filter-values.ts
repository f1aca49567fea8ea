import {
  type FilterSpec,
  LABEL_MATCHES,
  type LabelFilterValue,
  type MetadataLimits,
  metadataLimitProblems,
} from '../resources/index.js';
import type { Ref } from './dataset/links.js';
import type { FilterValue } from './dataset/match.js';

/**
 * One filter's value, validated the way the platform validates it: from its text in a GET query,
 * or from its JSON in the `filter` object of a body. Each kind of FilterSpec has one reader here.
 */
/** `at`: the entry at fault inside the value (a metadata key), when there is one. */
export type ValueParse = { ok: true; value: FilterValue } | { ok: false; expected: string; at?: string };

const INTEGER = /^(0|[1-9][0-9]*)$/;

const fail = (expected: string): ValueParse => ({ ok: false, expected });

/** A GET query parameter's text (the filters GET takes: not maps or references). */
export function queryValue(spec: FilterSpec, text: string): ValueParse {
  switch (spec.kind) {
    case 'time':
      return INTEGER.test(text) && Number.isSafeInteger(Number(text))
        ? { ok: true, value: Number(text) }
        : fail(EPOCH_MS);
    case 'number':
      return text.trim() === '' ? fail(numberIn(spec)) : numberValue(spec, Number(text));
    case 'string':
      return stringValue(spec.maxLength, text);
    case 'boolean':
      return text === 'true' || text === 'false' ? { ok: true, value: text === 'true' } : fail("'true' or 'false'");
    case 'ids':
    case 'strings': {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return fail(`a JSON array of ${spec.kind === 'ids' ? 'int64' : 'strings'}, e.g. ${spec.kind === 'ids' ? '[1,2]' : '["a","b"]'}`);
      }
      // GET takes fewer of some lists than the body does (events' assetIds: 100 and 5000).
      const maxItems = spec.maxItemsOnGet ?? spec.maxItems;
      const list = spec.kind === 'ids' ? idList(maxItems, parsed) : stringList(maxItems, spec.maxLength, spec.values, parsed);
      // The body takes these ids as references: held as references either way.
      if (list.ok && spec.kind === 'ids' && spec.refsInBody === true) {
        return { ok: true, value: (list.value as number[]).map((id): Ref => ({ id })) };
      }
      return list;
    }
    case 'refs':
    case 'map':
    case 'isNull':
    case 'labels':
      return fail('nothing: only the body of POST /list takes it');
  }
}

/** A value of the body's `filter` object; ranges are read by `rangeEnd`. */
export function bodyValue(spec: FilterSpec, value: unknown): ValueParse {
  switch (spec.kind) {
    case 'time':
    case 'number':
      return rangeEnd(spec, value);
    case 'string':
      return typeof value === 'string' && value.length >= 1 && value.length <= spec.maxLength
        ? { ok: true, value }
        : fail(`a string of 1 to ${spec.maxLength} characters`);
    case 'boolean':
      return typeof value === 'boolean' ? { ok: true, value } : fail('true or false');
    case 'ids':
      return spec.refsInBody === true ? refList(spec.maxItems, value) : idList(spec.maxItems, value);
    case 'strings':
      return stringList(spec.maxItems, spec.maxLength, spec.values, value);
    case 'refs':
      return refList(spec.maxItems, value);
    case 'map':
      return stringMap(spec.limits, value);
    case 'isNull':
      return isNullObject(value);
    case 'labels':
      return labelFilter(spec.maxItems, value);
  }
}

/** `{isNull: true|false}`, held as the boolean. */
function isNullObject(value: unknown): ValueParse {
  const expected = 'an object {isNull: boolean} alone (a range {min, max} or isNull, not both)';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(expected);
  const { isNull } = value as Record<string, unknown>;
  return Object.keys(value).length === 1 && typeof isNull === 'boolean' ? { ok: true, value: isNull } : fail(expected);
}

/** `{containsAny: [{externalId}]}` or `{containsAll: [...]}`: exactly one, 1 to `maxItems` labels. */
function labelFilter(maxItems: number, value: unknown): ValueParse {
  const expected = `{"containsAny": [...]} or {"containsAll": [...]} of 1 to ${maxItems} objects {"externalId": "..."}`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(expected);
  const entries = Object.entries(value);
  const [match, labels] = entries[0] ?? [];
  const known = (LABEL_MATCHES as readonly unknown[]).includes(match);
  if (entries.length !== 1 || !known || !sized(maxItems, labels)) return fail(expected);
  const valid = (entry: unknown) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry) || Object.keys(entry).length !== 1) return false;
    const { externalId } = entry as Record<string, unknown>;
    return typeof externalId === 'string' && externalId.length >= 1 && externalId.length <= 255;
  };
  return labels.every(valid) ? { ok: true, value: value as LabelFilterValue } : fail(expected);
}

/** One end (`min` or `max`) of a `{min, max}` range. */
export function rangeEnd(spec: FilterSpec, value: unknown): ValueParse {
  if (spec.kind === 'number') return typeof value === 'number' ? numberValue(spec, value) : fail(numberIn(spec));
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? { ok: true, value } : fail(EPOCH_MS);
}

const EPOCH_MS = 'epoch milliseconds (an integer >= 0)';

function numberIn(spec: { minimum: number; maximum: number }): string {
  return `a number from ${spec.minimum} to ${spec.maximum}`;
}

function numberValue(spec: { minimum: number; maximum: number }, value: number): ValueParse {
  const valid = Number.isFinite(value) && value >= spec.minimum && value <= spec.maximum;
  return valid ? { ok: true, value } : fail(numberIn(spec));
}

function stringValue(maxLength: number, text: string): ValueParse {
  return text.length >= 1 && text.length <= maxLength ? { ok: true, value: text } : fail(`1 to ${maxLength} characters`);
}

function sized(maxItems: number, value: unknown): value is unknown[] {
  return Array.isArray(value) && value.length >= 1 && value.length <= maxItems;
}

function idList(maxItems: number, value: unknown): ValueParse {
  const expected = `a list of 1 to ${maxItems} ids (integers from 1 to 2^53 - 1)`;
  if (!sized(maxItems, value)) return fail(expected);
  return value.every((id) => typeof id === 'number' && Number.isSafeInteger(id) && id >= 1)
    ? { ok: true, value: value as number[] }
    : fail(expected);
}

function stringList(
  maxItems: number,
  maxLength: number,
  values: readonly string[] | undefined,
  value: unknown,
): ValueParse {
  const expected =
    values === undefined
      ? `a list of 1 to ${maxItems} strings of 1 to ${maxLength} characters`
      : `a list of 1 to ${maxItems} of ${values.join(', ')}`;
  if (!sized(maxItems, value)) return fail(expected);
  const valid = (entry: unknown) =>
    typeof entry === 'string' && (values === undefined ? entry.length >= 1 && entry.length <= maxLength : values.includes(entry));
  return value.every(valid) ? { ok: true, value: value as string[] } : fail(expected);
}

function refList(maxItems: number, value: unknown): ValueParse {
  const expected = `a list of 1 to ${maxItems} objects {"id": N} or {"externalId": "..."}`;
  if (!sized(maxItems, value)) return fail(expected);
  const valid = (entry: unknown) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return false;
    const keys = Object.keys(entry);
    const { id, externalId } = entry as Record<string, unknown>;
    if (keys.length !== 1) return false;
    if (keys[0] === 'id') return typeof id === 'number' && Number.isSafeInteger(id) && id >= 1;
    return keys[0] === 'externalId' && typeof externalId === 'string' && externalId.length >= 1 && externalId.length <= 255;
  };
  return value.every(valid) ? { ok: true, value: value as Ref[] } : fail(expected);
}

/** A metadata map: strings only, within the collection's bounds (metadataLimitProblems). */
function stringMap(limits: MetadataLimits, value: unknown): ValueParse {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('an object of strings');
  for (const [key, text] of Object.entries(value)) {
    if (typeof text !== 'string') return { ok: false, expected: 'a string', at: key };
  }
  const [problem] = metadataLimitProblems(value as Record<string, string>, limits);
  return problem === undefined ? { ok: true, value: value as Record<string, string> } : fail(`metadata within the platform's bounds (${problem})`);
}
