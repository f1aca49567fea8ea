import { inspect } from 'node:util';

/** What a hidden value shows as, in a message as in a Secret. */
export const REDACTED = '[redacted]';

/**
 * Values shorter than this are not hidden: a variable holding `1`, `on` or `eu` would otherwise
 * turn every message into `[redacted]`. Real credentials are far longer.
 */
export const MIN_REDACTED_LENGTH = 4;

/**
 * At most this many values obtained during a run (`add`: the access tokens of an OAuth client,
 * renewed about once an hour) are kept, the oldest forgotten first: a server that makes the client
 * renew its token on every request cannot grow the set without bound. 256 renewals of tokens that
 * live an hour take ten days; by then the first is long expired and no request carries it.
 */
export const MAX_OBTAINED_VALUES = 256;

/**
 * A bearer credential in the `Bearer <token>` form (RFC 6750: the scheme in any case, then the
 * token's characters), whoever's it is: the scheme is kept, the token hidden. Only the token's
 * characters are taken, not everything up to the next space, so the `"` or `\"` after it stays
 * and a JSON log line stays JSON; tokens are long, so a message's "bearer token" is left alone.
 */
const BEARER_CREDENTIAL = /\b(Bearer\s+)[A-Za-z0-9\-._~+/]{16,}=*/gi;

/**
 * Hides a set of values in any text about to be printed, logged or written: each occurrence
 * becomes `[redacted]`. The values are the sensitive values of a job file (see
 * config/interpolate.ts), given when it is made, and those the run obtains as it goes (`add`: an
 * OAuth client's access tokens, the moment each arrives); also any `Bearer <token>` credential.
 * Each value is also found in the forms it takes on the way: percent-encoded in a URL's path or
 * query string, and escaped inside a JSON string. Longer values are replaced first, so one that
 * contains another is hidden whole. Made once from the loaded config and handed to what prints
 * and logs, and to the platform client, which adds the tokens it obtains.
 *
 * It runs on every log line, so it stays cheap as it grows: the job file's values are one regular
 * expression; an obtained value is looked for with `includes`, which skips a line shorter than
 * it at once (tokens are hundreds of characters), instead of lengthening that expression.
 */
export class Redactor {
  /** Hides nothing, and takes no values (`add` throws): for printing what holds no secret. */
  static readonly none: Redactor = new Redactor([], false);

  readonly #pattern: RegExp | undefined;
  readonly #count: number;
  /** False for `none`. */
  readonly #hides: boolean;
  /** The values obtained during the run (at most MAX_OBTAINED_VALUES, oldest first), each with its forms. */
  readonly #obtained = new Map<string, readonly string[]>();
  /** The forms of every obtained value, longest first. */
  #obtainedForms: readonly string[] = [];

  /** `values`: what to hide from the start; `hides` is false only for Redactor.none. */
  constructor(values: Iterable<string>, hides = true) {
    this.#hides = hides;
    const forms = new Set<string>();
    let count = 0;
    for (const value of new Set(values)) {
      if (value.length < MIN_REDACTED_LENGTH) continue;
      count++;
      for (const form of formsOf(value)) forms.add(form);
    }
    this.#count = count;
    this.#pattern = forms.size === 0 ? undefined : new RegExp(longestFirst(forms).map(escapeRegExp).join('|'), 'g');
  }

  /**
   * Hides `value` too, from now on: a credential the run obtained (an access token), added before
   * anything can print it. Only the MAX_OBTAINED_VALUES latest are kept.
   */
  add(value: string): void {
    if (!this.#hides) throw new Error('Redactor.none hides nothing and takes no values: add them to a Redactor of the job');
    if (value.length < MIN_REDACTED_LENGTH || this.#obtained.has(value)) return;
    this.#obtained.set(value, formsOf(value));
    if (this.#obtained.size > MAX_OBTAINED_VALUES) this.#obtained.delete(this.#obtained.keys().next().value!);
    this.#obtainedForms = longestFirst(new Set([...this.#obtained.values()].flat()));
  }

  /** False when there is nothing to hide (every call returns its input): Redactor.none. */
  get active(): boolean {
    return this.#hides;
  }

  redact(text: string): string {
    if (!this.#hides) return text;
    let redacted = text;
    // Obtained values first: a short value of the job file found inside a token would cut it apart.
    for (const form of this.#obtainedForms) if (redacted.includes(form)) redacted = redacted.replaceAll(form, REDACTED);
    if (this.#pattern !== undefined) redacted = redacted.replace(this.#pattern, REDACTED);
    return redacted.replace(BEARER_CREDENTIAL, `$1${REDACTED}`);
  }

  /** A copy of a JSON-like value (a run's report) with every string in it redacted. */
  redactStrings<T>(value: T): T {
    if (!this.#hides) return value;
    return this.#copy(value) as T;
  }

  /**
   * Redacts in place the message, stack and other text fields (a request's `path`, a file error's
   * `path`) of an error and of its causes (and of an AggregateError's errors), for an error on its
   * way to be printed; returns it.
   */
  redactError<T>(error: T): T {
    if (this.#hides) this.#scrub(error, new Set());
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
    replaceText(error, 'message', error.message, this.redact(error.message));
    if (error.stack !== undefined) replaceText(error, 'stack', error.stack, this.redact(error.stack));
    for (const [key, value] of Object.entries(error)) {
      if (typeof value === 'string') replaceText(error, key, value, this.redact(value));
    }
    this.#scrub(error.cause, seen);
    if (error instanceof AggregateError) for (const inner of error.errors) this.#scrub(inner, seen);
  }

  /** Never the values, whatever prints it. */
  toJSON(): string {
    return `Redactor(${this.#count + this.#obtained.size} values)`;
  }

  [inspect.custom](): string {
    return this.toJSON();
  }
}

/**
 * Sets an error's text field to its redacted text, when that differs. A field read through a
 * getter (a DOMException's `message`: an aborted signal's reason) is shadowed by a field of the
 * error's own; one that cannot be either (a frozen error) is left as it is.
 */
function replaceText(error: Error, key: string, text: string, redacted: string): void {
  if (redacted === text) return;
  try {
    (error as unknown as Record<string, unknown>)[key] = redacted;
  } catch {
    try {
      Object.defineProperty(error, key, { value: redacted, writable: true, configurable: true, enumerable: false });
    } catch {
      // Frozen: left as it is.
    }
  }
}

/** A value's forms (encodings), each also as escaped inside a JSON string. */
function formsOf(value: string): string[] {
  const forms = new Set<string>();
  for (const form of encodings(value)) {
    forms.add(form);
    forms.add(JSON.stringify(form).slice(1, -1));
  }
  return [...forms];
}

function longestFirst(forms: Iterable<string>): string[] {
  return [...forms].sort((a, b) => b.length - a.length);
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
