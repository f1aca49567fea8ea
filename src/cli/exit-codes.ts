/** Process exit codes of the CLI; documented in the README. */
export const EXIT = {
  OK: 0,
  /** Unknown command or flag, or an invalid option or config value. */
  USAGE: 2,
} as const;
