/** Process exit codes of the CLI; documented in docs/errors.md. */
export const EXIT = {
  OK: 0,
  /** The work failed (network, platform errors, a write that failed); nothing committed is lost. */
  FAILED: 1,
  /** Unknown command or flag, an invalid option or config value, or a run refused as it stands. */
  USAGE: 2,
  /** The platform, the identity provider or the output's object storage refused the credential. */
  AUTH: 3,
  /**
   * Refused because another live run holds the output (or this worker's share of it): an overlap.
   * This run changed nothing; the next scheduled run does the work. EX_TEMPFAIL of sysexits.h.
   */
  OVERLAP: 75,
  /** Stopped by SIGINT/SIGTERM after committing what was complete; the next run resumes. */
  INTERRUPTED: 130,
} as const;

/**
 * The last line of a run stopped by SIGINT/SIGTERM (exit 130), its summary or its error: the next
 * run goes on from the checkpoint, so the same command is all it takes.
 */
export const RESUME_HINT = 'bulk-extract: stopped; what is committed stays: run the same command again to resume';

/** Errors that the user fixes by changing the command, the config or the output folder. */
const USAGE_CODES = new Set([
  'E_CONFIG', 'E_USAGE', 'E_INSECURE_TRANSPORT', 'E_CHECKPOINT', 'E_NOT_OUTPUT', 'E_LINK_IN_OUTPUT', 'E_SYNC_CURSOR',
  'E_ACCESS', 'E_OUTPUT_ACCESS', 'E_QUERY_REFUSED',
]);

/** The exit code of a command that stopped with this error (a BulkExtractError's stable code). */
export function exitCodeOf(error: { code: string }): number {
  if (error.code === 'E_AUTH' || error.code === 'E_OUTPUT_AUTH') return EXIT.AUTH;
  // Stopped by SIGINT/SIGTERM before its partitions began (while it counted): interrupted all the same.
  if (error.code === 'E_ABORTED') return EXIT.INTERRUPTED;
  if (error.code === 'E_LOCKED') return EXIT.OVERLAP;
  return USAGE_CODES.has(error.code) ? EXIT.USAGE : EXIT.FAILED;
}
