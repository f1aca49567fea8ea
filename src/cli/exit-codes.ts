/** Process exit codes of the CLI; documented in the README. */
export const EXIT = {
  OK: 0,
  /** The work failed (network, platform errors); nothing committed is lost. */
  FAILED: 1,
  /** Unknown command or flag, or an invalid option or config value. */
  USAGE: 2,
  /** The platform or the identity provider refused the credential. */
  AUTH: 3,
  /** Stopped by SIGINT/SIGTERM after committing what was complete; the next run resumes. */
  INTERRUPTED: 130,
} as const;
