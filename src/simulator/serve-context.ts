import type { Clock } from '../util/clock.js';
import type { CursorCodec } from './cursor.js';
import type { FaultPlanner, RateGate } from './faults.js';
import type { SimulatorConfig } from './options.js';
import type { SimulatorStats } from './stats.js';

/**
 * What every handler of the platform's data (collections, datapoints, data models) reads: the
 * config, the cursors, the faults and the rate cap, the counters and the clock. Each kind of
 * route adds its own data.
 */
export interface ServeContext {
  config: SimulatorConfig;
  cursors: CursorCodec;
  planner: FaultPlanner;
  rateGate: RateGate | undefined;
  stats: SimulatorStats;
  clock: Clock;
}
