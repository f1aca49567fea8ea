import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { afterEach } from 'vitest';
import { closedPort } from './closed-port.js';

const gateways: ChildProcess[] = [];
afterEach(() => {
  for (const gateway of gateways.splice(0)) gateway.kill('SIGKILL');
});

/**
 * A Pushgateway (Debian's prometheus-pushgateway at `binary`) on a free loopback port, started by
 * the test and killed after it; resolves to its URL once it listens.
 */
export async function startPushgateway(binary: string): Promise<string> {
  const port = await closedPort();
  const gateway = spawn(binary, [`--web.listen-address=127.0.0.1:${port}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  gateways.push(gateway);
  const lines = createInterface({ input: gateway.stderr });
  const exited = once(gateway, 'exit').then(([code]) => {
    throw new Error(`prometheus-pushgateway exited with ${String(code)}`);
  });
  const listening = new Promise<void>((resolve) => lines.on('line', (line) => /Listening on/.test(line) && resolve()));
  await Promise.race([listening, exited]);
  return `http://127.0.0.1:${port}`;
}
