import { type Logger, pino } from 'pino';

export type { Logger };

/**
 * Header and field names whose values are credentials. pino replaces them with `[redacted]`
 * wherever they appear in a log record.
 */
export const REDACTED_PATHS = [
  'headers["api-key"]',
  'headers.authorization',
  'headers.cookie',
  'headers["set-cookie"]',
  '*.apiKey',
  '*.clientSecret',
  '*.token',
  '*.accessToken',
  '*.cookie',
  '*.password',
];

/** A logger writing JSON lines to stderr (stdout is for machine-readable output). */
export function createLogger(level = 'info'): Logger {
  return pino(
    { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { pid: process.pid } },
    pino.destination(2),
  );
}

/** A logger that writes nothing, for library use when the caller passes none. */
export const silentLogger: Logger = pino({ level: 'silent' });
