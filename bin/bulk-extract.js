#!/usr/bin/env node
import { existsSync, readFileSync, writeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { allocatorRestart, mayExecute } from './allocator.js';
import { nodeVersionProblem } from './node-version.js';

// An older Node than engines allows says so in one line, before dist/ (which it may not parse) loads.
const { engines } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const problem = nodeVersionProblem(process.version, engines.node, process.execPath);
if (problem !== undefined) {
  console.error(problem);
  process.exit(2);
}

// An export starts again with one malloc arena (bin/allocator.js), as the same process: a signal
// or a kill sent to it reaches the export.
const restart = allocatorRestart(process.env, process.platform, process.argv[2]);
// A failed execve ends the process: it is tried only where the system will run Node again;
// elsewhere the export runs as it is, with the allocator's defaults.
if (restart !== undefined && typeof process.execve === 'function' && mayExecute(process.execPath)) {
  process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], restart);
}

// A clone runs dist/, which `npm ci` builds (the prepare script); without it, say so instead of a stack trace.
const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  console.error(`bulk-extract: not built: ${fileURLToPath(entry)} is missing. Run npm ci (it builds dist/) or npm run build in ${root}.`);
  process.exit(2);
}
// Node ends a process whose awaits can no longer settle with exit code 13 and no word of ours: a run
// stalled by a defect. It says so, and exits as a failed run (1), which the next run resumes.
process.on('exit', (code) => {
  if (code !== 13) return;
  writeSync(
    2,
    'bulk-extract: internal error: the command stopped making progress with nothing left to wait for. ' +
    'Nothing committed is lost: run the same command again to resume, and please report this.\n',
  );
  process.exitCode = 1;
});
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
