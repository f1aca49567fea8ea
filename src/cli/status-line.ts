import type { LineSink } from '../log.js';

/** What the status line writes to: a terminal (stderr), or a fake one in tests. */
export interface TerminalOut {
  write(text: string): unknown;
  /** Width in characters, when known; the line is cut to fit so that it never wraps. */
  columns?: number | undefined;
}

const CLEAR = '\r\x1b[2K';

/**
 * The live line at the bottom of a terminal. Log lines go through it: it clears itself, the log
 * line is printed, and it is drawn again below, so the two never mix on one line.
 */
export class StatusLine implements LineSink {
  private text = '';

  constructor(private readonly out: TerminalOut = process.stderr) {}

  writeLine(text: string): void {
    this.out.write(`${this.text === '' ? '' : CLEAR}${text}${this.text}`);
  }

  show(text: string): void {
    // A width of 0 (some pseudo-terminals) means it is not known.
    const width = this.out.columns ?? 0;
    this.text = width < 20 || text.length < width ? text : `${text.slice(0, width - 2)}…`;
    this.out.write(`${CLEAR}${this.text}`);
  }

  clear(): void {
    if (this.text === '') return;
    this.text = '';
    this.out.write(CLEAR);
  }
}
