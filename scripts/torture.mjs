#!/usr/bin/env node
// The long crash-torture run: `npm run torture -- --kills 200 [--seed S]`. It runs the same test as
// `npm test` (test/torture/torture.test.ts, about 20 kills there) with more kills, and prints each
// scenario's report: kills by where they landed, exports completed and verified row by row, runs.
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { kills: { type: 'string', default: '200' }, seed: { type: 'string', default: '20261121' } },
});
const build = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
const started = Date.now();
const run = spawnSync('npx', ['vitest', 'run', 'test/torture', '--testTimeout', '3600000'], {
  stdio: 'inherit',
  env: { ...process.env, TORTURE_KILLS: values.kills, TORTURE_SEED: values.seed },
});
console.log(`torture: ${values.kills} kills, seed ${values.seed}, ${Math.round((Date.now() - started) / 1000)} s`);
process.exit(run.status ?? 1);
