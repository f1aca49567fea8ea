/**
 * Checking shards against what an output recorded: a shard's bytes, rows and keys, the
 * checkpoint's and the manifest's agreement, and the damage repair finds.
 */
export { findDamage } from './find-damage.js';
export { KeyCheck, type KeyReport } from './key-check.js';
export { recordProblems } from './record-problems.js';
export { assertShardsPresent, disagreeError, disagreements, readManifest, restarted } from './recorded.js';
export { checkShard, joinedKey, type RowReader } from './verify-shard.js';
export { type PointWindow, PointRowCheck } from './point-rows.js';
export { checkTable, type TableCheck, type TableReport } from './delta-check.js';
