#!/usr/bin/env node
// Adds lockfile entries for optional platform packages that the npm registry used here does not
// serve (for example @duckdb/node-bindings-darwin-arm64). npm records only the packages it could
// resolve, and `npm ci` then refuses the lockfile as out of sync with package.json. An entry with
// `os`/`cpu` and no download address is enough: npm skips it on other platforms and never fetches
// it. Run after every `npm install`: `npm run lock:complete`. With --check it only reports.
//
// It also gives each package whose install script package.json's allowScripts approves its
// registry address ("resolved"). npm trusts a package's version only from that address, and an
// npm set to omit-lockfile-registry-resolved (as here) leaves it out: `npm install-scripts
// approve` can then approve only every version by name, and an approval of one version
// (`"node@24.21.0": true`) matches nothing, so the script does not run. The address names registry.npmjs.org, which npm
// replaces with the registry it is configured to use (replace-registry-host).
import { readFileSync, writeFileSync } from 'node:fs';

const OS = 'darwin|linux|win32|freebsd|openbsd|netbsd|android|sunos|aix';
const CPU = 'x64|arm64|arm|ia32|ppc64|s390x|riscv64|loong64|mips64el';
const PLATFORM = new RegExp(`-(${OS})-(${CPU})(?:-(musl|gnu|msvc))?$`);
const REGISTRY = 'https://registry.npmjs.org/';
const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const check = process.argv.includes('--check');
const added = [];
const unknown = [];
const wrong = [];

for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (lock.packages[key] !== undefined || lock.packages[`${path}/${key}`] !== undefined) continue;
    const match = PLATFORM.exec(name);
    if (match === null) {
      unknown.push(`${name} (optional dependency of ${path || 'the project'})`);
      continue;
    }
    const [, os, cpu, libc] = match;
    lock.packages[key] = {
      version,
      optional: true,
      os: [os],
      cpu: [cpu],
      ...(libc === 'musl' || libc === 'gnu' ? { libc: [libc === 'gnu' ? 'glibc' : 'musl'] } : {}),
    };
    added.push(`${name}@${version}`);
  }
}

for (const [spec, allowed] of Object.entries(manifest.allowScripts ?? {})) {
  const approval = /^(@[^/@]+\/[^/@]+|[^/@]+)(?:@(\d+\.\d+\.\d+(?:[-+][\w.+-]*)?))?$/.exec(spec);
  if (allowed !== true || approval === null) continue;
  const [, name, pinned] = approval;
  const key = `node_modules/${name}`;
  const entry = lock.packages[key];
  if (entry === undefined || (pinned !== undefined && entry.version !== pinned)) {
    wrong.push(entry === undefined
      ? `allowScripts approves ${spec}, but package-lock.json has no ${name}: remove the approval`
      : `allowScripts approves ${spec}, but package-lock.json has ${name}@${entry.version}: review its install script, then approve "${name}@${entry.version}" in allowScripts instead`);
    continue;
  }
  const { version } = entry;
  const resolved = `${REGISTRY}${name}/-/${name.split('/').at(-1)}-${version}.tgz`;
  if (entry.resolved === resolved) continue;
  if (entry.resolved !== undefined) {
    wrong.push(`allowScripts approves ${spec}, but its lockfile entry comes from ${entry.resolved}, not the registry's ${resolved}`);
    continue;
  }
  // npm's own order: version, resolved, integrity, the rest.
  const { version: _, ...rest } = entry;
  lock.packages[key] = { version, resolved, ...rest };
  added.push(`the registry address of ${name}@${version}, whose install script allowScripts approves`);
}

if (wrong.length > 0) {
  console.error(wrong.join('\n'));
  process.exit(1);
}
if (unknown.length > 0) console.error(`Not a platform package, left alone:\n  ${unknown.join('\n  ')}`);
if (check) {
  if (added.length > 0) {
    console.error(`package-lock.json lacks:\n  ${added.join('\n  ')}\nRun npm run lock:complete.`);
    process.exit(1);
  }
  console.log('package-lock.json: every optional platform package has an entry, every version approved in allowScripts its registry address');
} else {
  lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(added.length === 0 ? 'package-lock.json is complete' : `added:\n  ${added.join('\n  ')}`);
}
