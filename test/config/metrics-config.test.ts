import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { describeMetrics, exportLabelOf } from '../../src/config/metrics-schema.js';
import { ConfigError } from '../../src/errors.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';

afterEach(removeTempDirs);

const JOB = [
  'source:',
  '  baseUrl: https://acme.example.com/api/v1/projects/demo',
  '  auth: { type: api-key, apiKey: "${API_KEY}" }',
  'streams:',
  '  - resource: events',
];
const ENV = { API_KEY: 'metrics-config-key-0001' };

function write(metrics: string[], name = 'nightly-events.yaml'): string {
  const file = join(tempDir('bulk-extract-metrics-config-'), name);
  writeFileSync(file, `${[...JOB, ...metrics].join('\n')}\n`);
  return file;
}

function problemOf(file: string, overrides = {}): string {
  try {
    loadConfig(file, ENV, overrides);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error('expected a ConfigError');
}

describe('metrics: in the job file', () => {
  it('defaults: no metrics section, no outputs; the export label is the job file name without extension', () => {
    const config = loadConfig(write([]), ENV);
    expect(config.metrics).toBeUndefined();
    expect(exportLabelOf(config.metrics, config.file)).toBe('nightly-events');
  });

  it('every key, with host and interval defaults', () => {
    const file = write(['metrics:', '  export: orders', '  textfile: ./m/bulk.prom', '  pushgateway: http://pg:9091', '  port: 9464']);
    const config = loadConfig(file, ENV);
    expect(config.metrics).toEqual({
      export: 'orders',
      textfile: './m/bulk.prom',
      pushgateway: 'http://pg:9091',
      port: 9464,
      host: '0.0.0.0',
      intervalSeconds: 15,
      runDeadline: 50 * 60_000,
    });
    expect(exportLabelOf(config.metrics, config.file)).toBe('orders');
  });

  it.each([
    [['  textfile: /var/lib/node_exporter/bulk.txt'], 'metrics.textfile: expected a file name ending in .prom'],
    [['  pushgateway: pushgateway:9091'], 'metrics.pushgateway: expected the http(s):// URL of a Pushgateway'],
    [['  pushgateway: http://user:secret-pw@pg:9091'], 'metrics.pushgateway: expected a URL without user or password'],
    [['  port: 70000'], 'metrics.port: Too big'],
    [['  intervalSeconds: 0'], 'metrics.intervalSeconds: Too small'],
    [['  prot: 9464'], 'metrics: Unrecognized key: "prot" (did you mean "port"?)'],
    [['  runDeadline: 50'], 'metrics.runDeadline: at least 1 minute'],
    [['  runDeadline: 31d'], 'metrics.runDeadline: at most 30 days'],
    [['  runDeadline: 50 minutes'], 'metrics.runDeadline: expected milliseconds (an integer >= 0) or a number with a unit'],
  ])('%j is refused: %s', (lines, message) => {
    const text = problemOf(write(['metrics:', ...lines]));
    expect(text).toContain(message);
    expect(text, 'a password in the URL is not repeated').not.toContain('secret-pw');
  });

  it('the --metrics-* flags set the keys, and are checked like them', () => {
    const file = write(['metrics:', '  textfile: ./a.prom']);
    const config = loadConfig(file, ENV, { metrics: { pushgateway: 'http://pg:9091', port: 9100, textfile: undefined } });
    expect(config.metrics).toMatchObject({ textfile: './a.prom', pushgateway: 'http://pg:9091', port: 9100 });
    expect(problemOf(write([]), { metrics: { port: 0 } })).toContain('metrics.port: Too small');
    const deadline = loadConfig(write(['metrics:', '  runDeadline: 2h']), ENV, { metrics: { runDeadline: '50m' } });
    expect(deadline.metrics?.runDeadline, '--metrics-run-deadline over the key').toBe(50 * 60_000);
    expect(problemOf(write([]), { metrics: { runDeadline: '50x' } })).toContain('metrics.runDeadline: expected milliseconds');
  });

  it('describeMetrics: the outputs in one line for --dry-run, or nothing', () => {
    expect(describeMetrics(undefined, '/jobs/a.yaml')).toBeUndefined();
    expect(describeMetrics({ host: '0.0.0.0', intervalSeconds: 15, runDeadline: 3_000_000 }, '/jobs/a.yaml')).toBeUndefined();
    const all = {
      textfile: '/m/a.prom',
      pushgateway: 'http://pg:9091',
      port: 9464,
      host: '0.0.0.0',
      intervalSeconds: 30,
      runDeadline: 3_000_000,
    };
    expect(describeMetrics(all, '/jobs/a.yaml')).toBe(
      'export="a": textfile /m/a.prom (every 30 s and at the end); push to http://pg:9091 (every 30 s and at the end); ' +
      '/metrics on 0.0.0.0:9464 while the run lasts; deadline 50 min after the start',
    );
    const deadlines = [50 * 60_000, 48 * 3_600_000].map((runDeadline) =>
      describeMetrics({ pushgateway: 'http://pg:9091', host: '0.0.0.0', intervalSeconds: 15, runDeadline }, '/jobs/a.yaml'),
    );
    expect(deadlines).toEqual([
      'export="a": push to http://pg:9091 (every 15 s and at the end); deadline 50 min after the start',
      'export="a": push to http://pg:9091 (every 15 s and at the end); deadline 48 h after the start',
    ]);
  });
});
