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

/** The checkpoint cannot be used: unreadable, damaged, from a newer version or for other settings. */
export class CheckpointError extends BulkExtractError {
  readonly code = 'E_CHECKPOINT';
}

/**
 * Writing the output failed (disk full, I/O error). What was committed before stays
 * valid; the partition stops and the next run resumes it.
 */
export class OutputError extends BulkExtractError {
  readonly code = 'E_OUTPUT';
}

/**
 * The output may not be written at all: this user may not (EACCES), the file system is read-only
 * (EROFS), the folder or file is immutable (EPERM), a file is where a folder must be. Unlike a full
 * disk it does not pass by itself, so it is exit 2: change the folder (or choose another), then
 * run again, which resumes from what was committed.
 */
export class OutputAccessError extends BulkExtractError {
  readonly code = 'E_OUTPUT_ACCESS';
}

/**
 * The output's object storage refused the credential (an Azure account key, SAS token, connection
 * string or Entra identity that is wrong, expired or lacks the data role). Like a credential the
 * platform refuses, it does not pass by itself: exit 3, fix the credential, then run again, which
 * resumes from what was committed.
 */
export class OutputAuthError extends BulkExtractError {
  readonly code = 'E_OUTPUT_AUTH';
}

/** An item's field does not have the type the platform documents (so it cannot go in its column). */
export class BadItemError extends BulkExtractError {
  readonly code = 'E_BAD_ITEM';
}

/**
 * The platform refused the sync cursor an incremental instances stream saved (it expired after 3
 * days, when soft deletes are purged): going on needs the user's choice, a new backfill or
 * accepting missed deletes.
 */
export class SyncCursorError extends BulkExtractError {
  readonly code = 'E_SYNC_CURSOR';
}

/**
 * A Delta table's transaction log cannot be read as the protocol says: a version missing from the
 * sequence, a line that is not an action, a checkpoint that is gone, a protocol this reader does not
 * support. The message names the log file and what is wrong with it.
 */
export class DeltaLogError extends BulkExtractError {
  readonly code = 'E_DELTA_LOG';
}
