#!/usr/bin/env node
// The benchmark suite of issue 6. Every scenario starts the simulator in its own process and runs
// each program measured in its own process under /usr/bin/time; ratios compare figures of one run.
//
//   npm run bench                      every scenario (about 10 minutes on 2 cores)
//   npm run bench -- memory polite     some of them
//   npm run bench -- memory --events 200000   smaller data sets for a quick look
import { parseArgs } from 'node:util';
import { machine } from './lib/harness.js';

const SCENARIOS = ['overhead', 'cpu', 'sdk', 'memory', 'partitions', 'polite'];

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { events: { type: 'string' } },
});
const unknown = positionals.filter((name) => !SCENARIOS.includes(name));
if (unknown.length > 0) {
  console.error(`Unknown scenario ${unknown.join(', ')}; choose from ${SCENARIOS.join(', ')}.`);
  process.exit(2);
}
const chosen = positionals.length > 0 ? positionals : SCENARIOS;
const options = values.events === undefined ? {} : { events: Number(values.events) };

console.log(`# bulk-extract benchmarks, ${new Date().toISOString().slice(0, 10)}, ${machine()}\n`);
for (const name of chosen) {
  const scenario = await import(`./scenarios/${name}.js`);
  console.error(`running ${name}...`);
  const result = await scenario.run(options);
  console.log(`## ${scenario.title}\n\nCommand: \`npm run bench -- ${name}\`\n\n${result.markdown}\n`);
  console.log(`<!-- ${name}: ${JSON.stringify(result.figures)} -->\n`);
}
