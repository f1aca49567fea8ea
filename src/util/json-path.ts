import { stringEnd } from './json-limits.js';

const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** The members that name an element of a list, in the order they are shown. */
const NAMES = ['id', 'space', 'externalId'];
/** Levels of a path shown before it is cut short. */
const SHOWN_LEVELS = 10;
/** Characters of a key shown; a longer one is cut. */
const KEY_CHARS = 60;

interface Frame {
  object: boolean;
  /** Offset of its opening bracket. */
  start: number;
  /** The member being read (objects), undefined before its key; the element's index (arrays). */
  key: string | undefined;
  index: number;
  /** In an object: a string now would be a key. */
  expectKey: boolean;
}

/**
 * Where byte `at` of a JSON answer lies, as a path from its root: `items[3] (id 42).metadata.x`, the
 * first element of a list named by its `id`, or `space` and `externalId` (what an item, a series or
 * an instance is known by). A path deeper than 10 levels is cut, saying how deep the spot lies (a
 * bracket counts as the level it opens): `a[0][0][0]… (257 levels)`.
 * Reads the bytes once with a stack of its own, no recursion and no parse, so that it can name the
 * spot of an answer refused for its nesting (findJsonProblem); for error messages, not a hot path.
 */
export function jsonPathAt(b: Uint8Array, at: number): string {
  const stack = framesAt(b, at);
  const levels = stack.length + (b[at] === OPEN_OBJECT || b[at] === OPEN_ARRAY ? 1 : 0);
  let path = '';
  let named = false;
  for (let level = 0; level < stack.length; level++) {
    const frame = stack[level]!;
    if (level === SHOWN_LEVELS) {
      path += `… (${levels.toLocaleString('en-US')} levels)`;
      break;
    }
    path += frame.object ? keySegment(frame.key ?? '?') : `[${frame.index}]`;
    const element = stack[level + 1];
    if (!named && !frame.object && element?.object === true) {
      named = true;
      path += nameOf(b, element.start);
    }
  }
  return path === '' ? 'the top level' : path.replace(/^\./, '');
}

/** The containers holding byte `at`, outermost first, as a walk from the start finds them. */
function framesAt(b: Uint8Array, at: number): Frame[] {
  const stack: Frame[] = [];
  let i = 0;
  while (i < at && i < b.length) {
    const c = b[i]!;
    const top = stack.at(-1);
    if (c === QUOTE) {
      const end = stringEnd(b, i + 1);
      if (top?.object === true && top.expectKey) {
        top.key = decodeKey(b, i, end);
        top.expectKey = false;
      }
      i = end;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      stack.push({ object: c === OPEN_OBJECT, start: i, key: undefined, index: 0, expectKey: c === OPEN_OBJECT });
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      stack.pop();
    } else if (c === COMMA && top !== undefined) {
      if (top.object) top.expectKey = true;
      else top.index++;
    } else if (c === COLON && top?.object === true) {
      top.expectKey = false;
    }
    i++;
  }
  return stack;
}

/** ` (id 42)`, ` (space "s", externalId "x")`: the members of the object at `start` that name it. */
function nameOf(b: Uint8Array, start: number): string {
  const found = new Map<string, string>();
  let depth = 0;
  let key: string | undefined;
  let expectKey = true;
  for (let i = start; i < b.length;) {
    const c = b[i]!;
    if (c === QUOTE) {
      const end = stringEnd(b, i + 1);
      if (depth === 1 && expectKey) {
        key = decodeKey(b, i, end);
        expectKey = false;
      } else if (depth === 1 && key !== undefined && NAMES.includes(key)) {
        found.set(key, clip(Buffer.from(b.buffer, b.byteOffset + i, end - i).toString('utf8')));
      }
      i = end;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++;
    else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (--depth === 0) break;
    } else if (depth === 1 && c === COMMA) {
      expectKey = true;
      key = undefined;
    } else if (depth === 1 && key === 'id' && !found.has('id') && c !== COLON && c > 0x20) {
      let end = i;
      while (end < b.length && b[end] !== COMMA && b[end] !== CLOSE_OBJECT && b[end]! > 0x20) end++;
      found.set('id', clip(Buffer.from(b.buffer, b.byteOffset + i, end - i).toString('latin1')));
      i = end;
      continue;
    }
    i++;
  }
  const shown = found.has('id') ? ['id'] : NAMES.filter((name) => found.has(name));
  return shown.length === 0 ? '' : ` (${shown.map((name) => `${name} ${found.get(name)}`).join(', ')})`;
}

function decodeKey(b: Uint8Array, start: number, end: number): string {
  const token = Buffer.from(b.buffer, b.byteOffset + start, Math.min(end - start, 4 * KEY_CHARS)).toString('utf8');
  try {
    return JSON.parse(end - start > 4 * KEY_CHARS ? `${token.slice(0, -1)}"` : token) as string;
  } catch {
    return token.slice(1, -1);
  }
}

function keySegment(key: string): string {
  if (/^[A-Za-z_$][\w$]*$/.test(key) && key.length <= KEY_CHARS) return `.${key}`;
  return `[${clip(JSON.stringify(key))}]`;
}

function clip(text: string): string {
  return text.length > KEY_CHARS + 2 ? `${text.slice(0, KEY_CHARS)}…` : text;
}
