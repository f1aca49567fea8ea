import type { RunHandle } from '../export/index.js';

/** What the metrics know of the runs before this one (from the output's run records). */
export interface EarlierRuns {
  /** When the last run that exited 0 ended, ms since the epoch. */
  lastSuccessMs?: number | undefined;
  lastExitCode?: number | undefined;
  /** When the last run that ended did (a refused one included), ms since the epoch. */
  lastEndMs?: number | undefined;
  /** The stable code of the error the last run ended with (`E_AUTH`, `E_CHECKPOINT`...), `none` for none. */
  lastCode?: string | undefined;
}

/** A stream of the run, with the formats it writes and its mode. */
export interface MetricsStream {
  name: string;
  formats: readonly string[];
  /** `full`, `incremental` or `snapshot`: only the last two have a data end. */
  mode: string;
}

/** What the metrics read whenever they are collected. */
export interface RunFacts {
  readonly exportLabel: string;
  /** The running export, once it drains; undefined before (and for a run refused before it began). */
  readonly run: RunHandle | undefined;
  readonly startedAtMs: number;
  /** When this run should have ended at the latest (its start plus metrics.runDeadline); undefined without one. */
  readonly deadlineMs: number | undefined;
  /** When this run ended; undefined while it lasts. */
  readonly endedAtMs: number | undefined;
  /** The last run that ended: the one before this while it lasts, this one once it ended. */
  readonly last: Readonly<EarlierRuns>;
  /** Per incremental or snapshot stream, the end of its last completed window (dataEndOf), epoch ms. */
  readonly dataEnds: ReadonlyMap<string, number>;
  now(): number;
}
