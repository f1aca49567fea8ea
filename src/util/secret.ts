import { inspect } from 'node:util';
import { REDACTED } from './redact.js';

/**
 * A credential. Only `reveal()` gives its value; printing, logging, JSON and string conversion
 * all show `[redacted]`, so a secret that strays into a log record or a file stays unreadable.
 */
export class Secret {
  readonly #value: string;
  readonly #origin: string | undefined;

  /**
   * @param origin Where the value was read, never the value: `the environment variable CLIENT_SECRET`,
   *   `the file /run/secrets/client`; a refusal of the credential names it, so that the user knows
   *   what to check.
   */
  constructor(value: string, origin?: string) {
    this.#value = value;
    this.#origin = origin;
  }

  /** Where the value was read (the constructor's `origin`); not a key of the object, as the value is not. */
  get origin(): string | undefined {
    return this.#origin;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return REDACTED;
  }
}
