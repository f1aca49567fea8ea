import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll } from 'vitest';
import { CLI } from './cli.js';

/**
 * Tests run as root, where file permissions do not bite. These helpers run the CLI as the
 * unprivileged user nobody (uid and gid 65534, through util-linux's setpriv), so that a folder it
 * may not write gives a real EACCES, as it does for a user.
 */
export const NOBODY = 65534;

const ROOT = dirname(dirname(CLI));
let copy: string | undefined;

afterAll(() => {
  if (copy !== undefined) rmSync(dirname(dirname(copy)), { recursive: true, force: true });
  copy = undefined;
});

/** The command line that runs the CLI as nobody: setpriv, node, the CLI and `args`. */
export function asNobody(args: readonly string[]): { command: string; args: string[] } {
  const flags = [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'];
  return { command: 'setpriv', args: [...flags, process.execPath, cliNobodyCanRead(), ...args] };
}

/**
 * This checkout's CLI when nobody can read it; otherwise (a checkout under a folder closed to
 * others, as CI's may be) a copy of what it needs to run, in a temporary folder open to all.
 */
function cliNobodyCanRead(): string {
  if (readable(CLI)) return CLI;
  if (copy !== undefined) return copy;
  const root = mkdtempSync(join(tmpdir(), 'bulk-extract-nobody-'));
  const app = join(root, 'app');
  for (const part of ['bin', 'dist', 'config', 'package.json']) cpSync(join(ROOT, part), join(app, part), { recursive: true });
  const modules = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((path) => path.startsWith(join(ROOT, 'node_modules')));
  for (const path of modules) cpSync(path, join(app, relative(ROOT, path)), { recursive: true });
  chmodSync(root, 0o755);
  copy = join(app, 'bin', 'bulk-extract.js');
  if (!readable(copy)) throw new Error(`nobody cannot read ${copy} either: is ${tmpdir()} open to all users?`);
  return copy;
}

function readable(cli: string): boolean {
  const probe = `require('fs').readFileSync(${JSON.stringify(join(dirname(dirname(cli)), 'node_modules', 'pino', 'package.json'))})`;
  const result = spawnSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', process.execPath, '-e', probe]);
  return result.status === 0;
}
