import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { closedPort } from './closed-port.js';

/**
 * Debian's prometheus-pushgateway on a free loopback port, its groups in memory only, started by a
 * test; resolves with its URL once it listens. `stopPushgateways()` (in afterEach) kills the ones started.
 */
const started: ChildProcess[] = [];

export async function startPushgateway(binary: string): Promise<string> {
  const port = await closedPort();
  // Debian's default keeps the groups in /var/lib/prometheus/pushgateway.data, shared by every
  // gateway started: each test's is kept in memory, its own.
  const args = [`--web.listen-address=127.0.0.1:${port}`, '--persistence.file='];
  const gateway = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  started.push(gateway);
  const lines = createInterface({ input: gateway.stderr });
  const exited = once(gateway, 'exit').then(([code]) => {
    throw new Error(`prometheus-pushgateway exited with ${String(code)}`);
  });
  const listening = new Promise<void>((resolve) => lines.on('line', (line) => /Listening on/.test(line) && resolve()));
  await Promise.race([listening, exited]);
  return `http://127.0.0.1:${port}`;
}

export function stopPushgateways(): void {
  for (const gateway of started.splice(0)) gateway.kill('SIGKILL');
}

/** The grouping labels of every group the gateway holds (`GET /api/v1/metrics`), each as `name=value,...` sorted. */
export async function groupKeys(url: string): Promise<string[]> {
  const answer = (await (await fetch(`${url}/api/v1/metrics`)).json()) as { data: { labels: Record<string, string> }[] };
  return answer.data
    .map(({ labels }) => Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k}=${v}`).join(','))
    .sort();
}
