import { inspect } from 'node:util';

/** What a hidden value shows as, in a message as in a Secret. */
export const REDACTED = '[redacted]';

/**
 * Values shorter than this are not hidden: a variable holding `1`, `on` or `eu` would otherwise
 * turn every message into `[redacted]`. Real credentials are far longer.
 */
export const MIN_REDACTED_LENGTH = 4;

/**
 * Hides a set of values (the sensitive values of a job file, see config/interpolate.ts) in any text
 * about to be printed, logged or written: each occurrence becomes `[redacted]`. Each value is also
 * found in the forms it takes on the way: percent-encoded in a URL's path or query string, and
 * escaped inside a JSON string. Longer values are replaced first, so one that contains another is
 * hidden whole. Made once from the loaded config and handed to what prints and logs.
 */
export class Redactor {
  /** Hides nothing. */
  static readonly none: Redactor = new Redactor([]);

  readonly #pattern: RegExp | undefined;
  readonly #count: number;

  constructor(values: Iterable<string>) {
    const forms = new Set<string>();
    let count = 0;
    for (const value of new Set(values)) {
      if (value.length < MIN_REDACTED_LENGTH) continue;
      count++;
      for (const form of encodings(value)) {
        forms.add(form);
        forms.add(JSON.stringify(form).slice(1, -1));
      }
    }
    this.#count = count;
    const longestFirst = [...forms].sort((a, b) => b.length - a.length);
    this.#pattern = longestFirst.length === 0 ? undefined : new RegExp(longestFirst.map(escapeRegExp).join('|'), 'g');
  }

  /** False when there is nothing to hide (every call returns its input). */
  get active(): boolean {
    return this.#pattern !== undefined;
  }

  redact(text: string): string {
    return this.#pattern === undefined ? text : text.replace(this.#pattern, REDACTED);
  }

  /** A copy of a JSON-like value (a run's report) with every string in it redacted. */
  redactStrings<T>(value: T): T {
    if (this.#pattern === undefined) return value;
    return this.#copy(value) as T;
  }

  /**
   * Redacts in place the message, stack and other text fields (a request's `path`, a file error's
   * `path`) of an error and of its causes (and of an AggregateError's errors), for an error on its
   * way to be printed; returns it.
   */
  redactError<T>(error: T): T {
    if (this.#pattern !== undefined) this.#scrub(error, new Set());
    return error;
  }

  /** `work()`, with whatever it throws redacted (redactError) on its way out. */
  async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw this.redactError(error);
    }
  }

  #copy(value: unknown): unknown {
    if (typeof value === 'string') return this.redact(value);
    if (Array.isArray(value)) return value.map((item) => this.#copy(item));
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.#copy(item)]));
  }

  #scrub(error: unknown, seen: Set<unknown>): void {
    if (!(error instanceof Error) || seen.has(error)) return;
    seen.add(error);
    error.message = this.redact(error.message);
    if (error.stack !== undefined) error.stack = this.redact(error.stack);
    const fields = error as unknown as Record<string, unknown>;
    for (const [key, value] of Object.entries(error)) {
      if (typeof value !== 'string') continue;
      try {
        fields[key] = this.redact(value);
      } catch {
        // A read-only field: left as it is.
      }
    }
    this.#scrub(error.cause, seen);
    if (error instanceof AggregateError) for (const inner of error.errors) this.#scrub(inner, seen);
  }

  /** Never the values, whatever prints it. */
  toJSON(): string {
    return `Redactor(${this.#count} values)`;
  }

  [inspect.custom](): string {
    return this.toJSON();
  }
}

/**
 * A value as written, in a URL's path (encodeURI: spaces as %20, `/` and `+` kept), as a URI
 * component (encodeURIComponent) and in a form-encoded query string (URLSearchParams: spaces as +).
 */
function encodings(value: string): string[] {
  const forms = [value];
  try {
    forms.push(encodeURI(value), encodeURIComponent(value));
  } catch {
    // A lone surrogate cannot be percent-encoded, so it never shows so either.
  }
  forms.push(new URLSearchParams([['', value]]).toString().slice(1));
  return forms;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
