import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';

/** The built CLI (`npm test` builds before running the tests). */
export const CLI = fileURLToPath(new URL('../../bin/bulk-extract.js', import.meta.url));

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const running = new Set<ChildProcessWithoutNullStreams>();

// A failed assertion must not leave a CLI process behind.
afterEach(() => {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  running.clear();
});

/** Runs the CLI to completion. */
export async function runCli(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Finished> {
  return finish(spawn(process.execPath, [CLI, ...args], { env }));
}

/** Starts the CLI and leaves it running; `firstLine` resolves with the first stdout line. */
export function startCli(args: string[]): {
  child: ChildProcessWithoutNullStreams;
  firstLine: Promise<string>;
} {
  const child = spawn(process.execPath, [CLI, ...args]);
  running.add(child);
  const lines = createInterface({ input: child.stdout });
  const firstLine = new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`CLI exited with ${code} before printing a line`)));
    // Not started (EAGAIN on a loaded machine): the test fails with it, not the worker with an unhandled 'error'.
    child.on('error', (error) => reject(new Error(`could not start the CLI: ${error.message}`, { cause: error })));
  });
  return { child, firstLine };
}

export async function finish(child: ChildProcessWithoutNullStreams): Promise<Finished> {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  return { code, signal, stdout, stderr };
}
