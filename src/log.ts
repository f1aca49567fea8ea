import { type Logger, type LoggerOptions, pino } from 'pino';
import { prettyFactory } from 'pino-pretty';
import { REDACTED, Redactor } from './util/redact.js';

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
 * What hides credentials in log records: the fields of REDACTED_PATHS, and what `redactor`
 * (JobConfig.redactor) hides, the job's sensitive values and the access tokens the run obtains
 * (added as they arrive), anywhere in a record's line, message and fields alike.
 */
export function redactionOptions(redactor: Redactor = Redactor.none): Pick<LoggerOptions, 'redact' | 'hooks'> {
  return {
    redact: { paths: REDACTED_PATHS, censor: REDACTED },
    ...(redactor.active ? { hooks: { streamWrite: (line: string) => redactor.redact(line) } } : {}),
  };
}

/** Where human-readable log lines go; a terminal's live status line clears itself around them. */
export interface LineSink {
  /** `text` is one or more complete lines, each ending in a newline. */
  writeLine(text: string): void;
}

const stderrSink: LineSink = { writeLine: (text) => process.stderr.write(text) };

/**
 * The fields that make a warning a notice: something the user must read and act on (a deprecated
 * credential), not an entry of the log. A logger of createLogger says a notice as one plain line,
 * `warning: <message>`, JSON log or not, and each message once; any other logger (a
 * library caller's) logs it as the warning it is, with `notice: true`.
 */
export const NOTICE = { notice: true } as const;

function isNotice(fields: unknown): boolean {
  return typeof fields === 'object' && fields !== null && (fields as { notice?: unknown }).notice === true;
}

/** The hook that says notices plainly on `sink`, each message once, and logs every other record. */
function noticesOn(sink: LineSink, redactor: Redactor): NonNullable<NonNullable<LoggerOptions['hooks']>['logMethod']> {
  const said = new Set<string>();
  return function (args, method) {
    const [fields, message] = args as unknown[];
    if (!isNotice(fields) || typeof message !== 'string') return method.apply(this, args);
    if (said.has(message)) return;
    said.add(message);
    sink.writeLine(`warning: ${redactor.redact(message)}\n`);
  };
}

/**
 * A logger on stderr (stdout is for machine-readable output): JSON lines, or human-readable lines
 * when `pretty` (default: stderr is a terminal). Human-readable lines are one line a record: the
 * record's fields (and an error's stack) are shown only at debug level, so every message says
 * what a reader needs by itself. Notices (NOTICE) are plain lines in both. `redactor` hides the
 * job's sensitive values in every line (create the logger once the job file is loaded).
 */
export function createLogger(
  level = 'info',
  prettyPrint = process.stderr.isTTY,
  sink: LineSink = stderrSink,
  redactor: Redactor = Redactor.none,
): Logger {
  const redaction = redactionOptions(redactor);
  const hooks = { ...redaction.hooks, logMethod: noticesOn(sink, redactor) };
  const options = { level, ...redaction, hooks, base: { pid: process.pid } };
  // Written at once, as the plain lines on stdout and stderr are: none comes after a report or summary.
  if (!prettyPrint) return pino(options, pino.destination({ dest: 2, sync: true }));
  const verbose = level === 'debug' || level === 'trace';
  // The one field a message leaves out on purpose: where a run writes (its JSON message is fixed).
  const messageFormat = '{msg}{if outDir} into {outDir}{end}';
  const format = prettyFactory({ ignore: 'pid,hostname', translateTime: 'HH:MM:ss', hideObject: !verbose, messageFormat });
  return pino(options, { write: (record: string) => sink.writeLine(format(record)) });
}

/** A logger that writes nothing, for library use when the caller passes none. */
export const silentLogger: Logger = pino({ level: 'silent' });

/**
 * The fields that describe an error in a log record: its stable code always, the error itself
 * (with its stack) only at debug level, where it helps; the message says the rest.
 */
export function errorFields(error: unknown, logger: Logger): Record<string, unknown> {
  const code = (error as { code?: unknown } | null)?.code;
  return { ...(typeof code === 'string' ? { code } : {}), ...(logger.isLevelEnabled('debug') ? { err: error } : {}) };
}
