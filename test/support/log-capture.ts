import { Writable } from 'node:stream';
import { pino } from 'pino';
import { type Logger, redactionOptions } from '../../src/log.js';
import { Redactor } from '../../src/util/redact.js';

export interface CapturedLogger {
  logger: Logger;
  /** Every line written so far, in order (JSON text, one record each). */
  lines(): string[];
  /** The lines parsed as JSON records. */
  records(): Record<string, unknown>[];
}

/**
 * A pino logger at level debug with the production redaction (and the job's sensitive values, given
 * `redactor`), writing into memory: for tests that assert what was (or was not) logged. pino writes
 * synchronously to a plain Writable.
 */
export function captureLogger(level = 'debug', redactor: Redactor = Redactor.none): CapturedLogger {
  const collected: string[] = [];
  let pending = '';
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      pending += chunk.toString();
      const parts = pending.split('\n');
      pending = parts.pop() ?? '';
      for (const line of parts) if (line !== '') collected.push(line);
      callback();
    },
  });
  const logger = pino({ level, ...redactionOptions(redactor) }, stream);
  const lines = () => (pending === '' ? [...collected] : [...collected, pending]);
  return {
    logger,
    lines,
    records: () => lines().map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
