import { type Logger, pino } from 'pino';
import pretty from 'pino-pretty';

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

/**
 * A logger on stderr (stdout is for machine-readable output): JSON lines, or human-readable lines
 * when `pretty` (default: stderr is a terminal).
 */
export function createLogger(level = 'info', prettyPrint = process.stderr.isTTY): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { pid: process.pid } };
  if (!prettyPrint) return pino(options, pino.destination(2));
  return pino(options, pretty({ destination: 2, sync: true, ignore: 'pid,hostname', translateTime: 'HH:MM:ss' }));
}

/** A logger that writes nothing, for library use when the caller passes none. */
export const silentLogger: Logger = pino({ level: 'silent' });
