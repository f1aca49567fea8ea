import { inspect } from 'node:util';
import { REDACTED } from './redact.js';

/**
 * A credential. Only `reveal()` gives its value; printing, logging, JSON and string conversion
 * all show `[redacted]`, so a secret that strays into a log record or a file stays unreadable.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
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
