#!/usr/bin/env node
// Summarizes a V8 CPU profile (node --cpu-prof) of one thread: self time per function and per
// package/file group, top entries first, as shares of the sampled time.
//
//   node bench/tools/profile-top.js FILE.cpuprofile [--top 25]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '25' } } });
const profile = JSON.parse(readFileSync(positionals[0], 'utf8'));
const top = Number(values.top);

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfMicros = new Map();
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i];
  selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const total = [...selfMicros.values()].reduce((a, b) => a + b, 0);

const byFunction = new Map();
const byGroup = new Map();
for (const [id, micros] of selfMicros) {
  const { functionName, url, lineNumber } = byId.get(id).callFrame;
  const name = `${functionName || '(anonymous)'} ${shortUrl(url)}${url ? `:${lineNumber + 1}` : ''}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
  const group = groupOf(functionName, url);
  byGroup.set(group, (byGroup.get(group) ?? 0) + micros);
}

function shortUrl(url) {
  return url.replace(/^file:\/\/.*?\/(node_modules|dist|src)\//, '$1/').replace(/^node:/, 'node:');
}
function groupOf(functionName, url) {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native: JSON, builtins)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  const own = /\/dist\/(.*)$/.exec(url);
  return own ? `dist/${own[1]}` : url;
}
function print(title, map, count) {
  console.log(`\n${title} (of ${(total / 1e6).toFixed(2)} s sampled)`);
  for (const [name, micros] of [...map].sort((a, b) => b[1] - a[1]).slice(0, count)) {
    console.log(`${((100 * micros) / total).toFixed(1).padStart(5)}%  ${(micros / 1e6).toFixed(2).padStart(6)} s  ${name}`);
  }
}
print('Self time by package or file', byGroup, top);
print('Self time by function', byFunction, top);
