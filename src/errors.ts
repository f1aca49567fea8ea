/**
 * One base class for every error bulk-extract raises on purpose. Callers branch on `code`, never on
 * the message text; messages say what happened, where, and what to do.
 */
export abstract class BulkExtractError extends Error {
  abstract readonly code: string;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A configuration value or command-line argument is invalid. */
export class ConfigError extends BulkExtractError {
  readonly code = 'E_CONFIG';
}

/** The command line itself is unusable (unknown command or flag). */
export class UsageError extends BulkExtractError {
  readonly code = 'E_USAGE';
}
