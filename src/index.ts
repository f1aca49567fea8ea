export { BulkExtractError, ConfigError, UsageError } from './errors.js';
export type { Simulator, SimulatorOptions } from './simulator/index.js';
export { startSimulator } from './simulator/index.js';
