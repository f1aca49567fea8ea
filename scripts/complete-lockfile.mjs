#!/usr/bin/env node
// Adds lockfile entries for optional platform packages that the npm registry used here does not
// serve (for example @duckdb/node-bindings-darwin-arm64). npm records only the packages it could
// resolve, and `npm ci` then refuses the lockfile as out of sync with package.json. An entry with
// `os`/`cpu` and no download address is enough: npm skips it on other platforms and never fetches
// it. Run after every `npm install`: `npm run lock:complete`. With --check it only reports.
import { readFileSync, writeFileSync } from 'node:fs';

const OS = 'darwin|linux|win32|freebsd|openbsd|netbsd|android|sunos|aix';
const CPU = 'x64|arm64|arm|ia32|ppc64|s390x|riscv64|loong64|mips64el';
const PLATFORM = new RegExp(`-(${OS})-(${CPU})(?:-(musl|gnu|msvc))?$`);
const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const check = process.argv.includes('--check');
const added = [];
const unknown = [];

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

if (unknown.length > 0) console.error(`Not a platform package, left alone:\n  ${unknown.join('\n  ')}`);
if (check) {
  if (added.length > 0) {
    console.error(`package-lock.json lacks ${added.length} optional platform entries; run npm run lock:complete`);
    process.exit(1);
  }
  console.log('package-lock.json: every optional platform package has an entry');
} else {
  lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(added.length === 0 ? 'package-lock.json is complete' : `added:\n  ${added.join('\n  ')}`);
}
