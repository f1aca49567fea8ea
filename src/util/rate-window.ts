/**
 * Rows per second over a sliding window of the last ticks (default 30 s of them), so that the
 * rate shown moves with the run without jumping at every page: a page of 1000 rows lands at one
 * tick, and the ticks before it saw none.
 */
export class RateWindow {
  private readonly samples: { at: number; rows: number }[] = [];

  /** `windowMs`: how far back the window reaches, in ms (default 30,000). */
  constructor(private readonly windowMs = 30_000) {}

  /**
   * Takes the rows counted so far at `at` (ms, any monotonic clock) and returns the rows per second
   * between the oldest sample in the window and this one; undefined until two samples lie apart.
   */
  add(at: number, rows: number): number | undefined {
    this.samples.push({ at, rows });
    // The oldest kept is the last at or before the window's start: once the run is older than the
    // window, the rate is always over the whole of it.
    while (this.samples.length > 2 && this.samples[1]!.at <= at - this.windowMs) this.samples.shift();
    const first = this.samples[0]!;
    return at > first.at ? ((rows - first.rows) * 1000) / (at - first.at) : undefined;
  }
}
