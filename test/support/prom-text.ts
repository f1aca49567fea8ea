import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';

/** One sample of the Prometheus text format: its metric name, labels and value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of a text exposition (comments skipped). Throws on a line it cannot read. */
export function parseSamples(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = SAMPLE.exec(line);
      if (match === null) throw new Error(`not a sample line: ${line}`);
      const labels: Record<string, string> = {};
      for (const [, key, value] of (match[2] ?? '').matchAll(LABEL)) labels[key!] = value!.replace(/\\(.)/g, '$1');
      return { name: match[1]!, labels, value: Number(match[3]) };
    });
}

/** The value of the one sample of `name` whose labels include `labels`; undefined when none. */
export function valueOf(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const found = samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

/**
 * A program from Debian's prometheus packages (promtool, prometheus-pushgateway), or undefined
 * when it is not installed here; CI (CI=true) installs them (.ci/run), so there it must exist.
 */
export function prometheusTool(name: 'promtool' | 'prometheus-pushgateway'): string | undefined {
  const path = `/usr/bin/${name}`;
  if (existsSync(path)) return path;
  if (process.env.CI === 'true') throw new Error(`${path} is missing: .ci/run installs Debian's prometheus packages`);
  return undefined;
}

/** `promtool check metrics` of `text` (on its stdin): its exit code and what it printed. */
export async function promtoolCheckMetrics(
  promtool: string,
  text: string,
): Promise<{ code: number | null; output: string }> {
  const child = spawn(promtool, ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stdin.end(text);
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, output };
}
