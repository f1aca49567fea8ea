#!/usr/bin/env node
// The benchmark suite (issues 6 and 16). Every scenario starts the simulator in its own process and
// runs each program measured in its own process under /usr/bin/time; ratios compare figures of one
// run. With 2 or more cores the simulator runs on core 0 and the program measured on core 1
// (bench/lib/harness.js; BENCH_NO_PIN=1 to share them); the report's first line says which.
//
//   npm run bench                      every scenario (about 25 minutes on 2 cores)
//   npm run bench -- memory polite     some of them
//   npm run bench -- memory --events 200000   smaller data sets for a quick look
//   npm run bench -- datapoints        only when named (issue 28); --points 200000 --rounds 1 for a quick look
//   npm run bench -- instances         only when named (issue 29); --instances 20000 --rounds 1 for a quick look
import { parseArgs } from 'node:util';
import { machine, placement } from './lib/harness.js';

const SCENARIOS = ['sdk', 'memory', 'large-items', 'overhead', 'cpu', 'partitions', 'polite'];
/** Run only when named: the datapoints scenario alone takes about 15 minutes on 2 cores; instances (issue 29) too. */
const NAMED_ONLY = ['datapoints', 'instances'];

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    events: { type: 'string' },
    points: { type: 'string' },
    instances: { type: 'string' },
    rounds: { type: 'string' },
  },
});
const unknown = positionals.filter((name) => !SCENARIOS.includes(name) && !NAMED_ONLY.includes(name));
if (unknown.length > 0) {
  console.error(`Unknown scenario ${unknown.join(', ')}; choose from ${[...SCENARIOS, ...NAMED_ONLY].join(', ')}.`);
  process.exit(2);
}
const chosen = positionals.length > 0 ? positionals : SCENARIOS;
// --points is the datapoints scenario's (its 10M points), --instances the instances scenario's (its
// 1M nodes), --rounds both's (3); the others ignore them.
const options = Object.fromEntries(
  ['events', 'points', 'instances', 'rounds'].filter((name) => values[name] !== undefined).map((name) => [name, Number(values[name])]),
);

console.log(`# bulk-extract benchmarks, ${new Date().toISOString().slice(0, 10)}, ${machine()}\n\n${placement()}.\n`);
for (const name of chosen) {
  const scenario = await import(`./scenarios/${name}.js`);
  console.error(`running ${name}...`);
  const result = await scenario.run(options);
  console.log(`## ${scenario.title}\n\nCommand: \`npm run bench -- ${name}\`\n\n${result.markdown}\n`);
  console.log(`<!-- ${name}: ${JSON.stringify(result.figures)} -->\n`);
}
