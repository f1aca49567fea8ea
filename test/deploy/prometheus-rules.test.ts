import { execFile } from 'node:child_process';
import { accessSync, constants, copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, type TestContext } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { fencedBlocks } from '../docs/fenced-blocks.js';
import { anchors } from '../docs/markdown-headings.js';

/**
 * deploy/prometheus, checked by Prometheus' own promtool (Debian's package `prometheus`, which
 * .ci/run installs): the rules load, their unit tests (TESTS) pass, and the example
 * configuration loads. Without promtool these skip locally, and fail in CI (CI=true), which must run them.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DIR = 'deploy/prometheus';
/** The unit tests of the rules, for `promtool test rules`. */
const TESTS = ['alerts.test.yaml', 'runs.test.yaml', 'deadlines.test.yaml', 'kube.test.yaml', 'shards.test.yaml'];
const ALERTS = [
  'BulkExtractKubeJobFailed',
  'BulkExtractNoRecentSuccess',
  'BulkExtractRunDiedOrHung',
  'BulkExtractRunFailed',
  'BulkExtractRunNeedsAttention',
  'BulkExtractRunOverlapped',
  'BulkExtractThrottled',
];

/** promtool's path on PATH, or undefined. */
function onPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter((d) => d !== '')) {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return join(dir, command);
    } catch {
      // not in this folder
    }
  }
  return undefined;
}
const PROMTOOL = onPath('promtool');

/** Skips the test when promtool is missing, unless in CI, where that is a failure. */
function needPromtool(ctx: TestContext): string {
  if (PROMTOOL !== undefined) return PROMTOOL;
  const why = 'promtool is not on PATH; install Debian\'s package prometheus (see CONTRIBUTING.md)';
  if (process.env.CI === 'true') expect.fail(`${why}: CI must run these checks, and .ci/run installs it`);
  return ctx.skip(why);
}

interface Run {
  code: number;
  /** stdout and stderr, in that order. */
  output: string;
}

/** promtool with `args`, no shell, in `cwd`; a non-zero exit is a result, not an exception. */
function promtool(path: string, args: string[], cwd = ROOT): Promise<Run> {
  return new Promise((resolve) => {
    execFile(path, args, { cwd, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, output: `${stdout}${stderr}${error !== null && code === -1 ? error.message : ''}` });
    });
  });
}

type Mapping = Record<string, unknown>;
const yamlOf = (file: string): Mapping => parseYaml(readFileSync(join(ROOT, DIR, file), 'utf8')) as Mapping;

interface RuleGroup { name: string; rules: { alert?: string }[] }
interface RuleTest { eval_time: string; alertname: string; exp_alerts: unknown[] }

const temp = mkdtempSync(join(tmpdir(), 'prometheus-rules-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

describe('deploy/prometheus with promtool', () => {
  it('promtool check rules alerts.yaml: the alerts load', async (ctx) => {
    const run = await promtool(needPromtool(ctx), ['check', 'rules', `${DIR}/alerts.yaml`]);
    expect(run.code, run.output).toBe(0);
    expect(run.output).toContain(`SUCCESS: ${ALERTS.length} rules found`);
  });

  it('promtool test rules alerts.test.yaml runs.test.yaml: every case passes', async (ctx) => {
    const run = await promtool(needPromtool(ctx), ['test', 'rules', ...TESTS.map((file) => `${DIR}/${file}`)]);
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/^\s*SUCCESS\s*$/m);
    expect(run.output).not.toContain('FAILED');
  });

  it.for([
    ['a 429 threshold of 50% instead of 20%', ') > 0.2\n', ') > 0.5\n', 'BulkExtractThrottled'],
    ['a run deadline of 60 min instead of 55', '> 55 * 60\n', '> 60 * 60\n', 'BulkExtractRunDiedOrHung'],
    ['no error code in the alerts', '{code!="none"}', '{code="E_NONE"}', 'BulkExtractRunNeedsAttention'],
  ] as const)('promtool test rules fails when a rule changes: %s', async ([, from, to, alert], ctx) => {
    const path = needPromtool(ctx);
    const rules = readFileSync(join(ROOT, DIR, 'alerts.yaml'), 'utf8');
    expect(rules).toContain(from);
    const dir = mkdtempSync(join(temp, 'changed-'));
    writeFileSync(join(dir, 'alerts.yaml'), rules.replaceAll(from, to));
    for (const file of TESTS) copyFileSync(join(ROOT, DIR, file), join(dir, file));
    const run = await promtool(path, ['test', 'rules', ...TESTS], dir);
    expect(run.code).toBe(1);
    expect(run.output).toContain('FAILED');
    expect(run.output).toContain(`alertname: ${alert}`);
  });

  it('the PromQL blocks of docs/scheduled-exports.md and docs/monitoring.md parse (checked as recording rules)', async (ctx) => {
    const path = needPromtool(ctx);
    const pages = ['docs/scheduled-exports.md', 'docs/monitoring.md'];
    const blocks = pages.flatMap((page) => fencedBlocks(readFileSync(join(ROOT, page), 'utf8'), page));
    const queries = blocks.filter((b) => b.lang === 'promql');
    expect(queries.length, 'the dashboard queries').toBeGreaterThanOrEqual(10);
    const rules = queries.map((q, i) => ({ record: `doc_query_${i}`, expr: q.text, labels: { where: q.where } }));
    writeFileSync(join(temp, 'doc-queries.yaml'), stringifyYaml({ groups: [{ name: 'doc-queries', rules }] }));
    const run = await promtool(path, ['check', 'rules', 'doc-queries.yaml'], temp);
    expect(run.code, run.output).toBe(0);
    expect(run.output).toContain(`SUCCESS: ${queries.length} rules found`);
  });

  it('promtool check config prometheus.yaml: the example configuration loads, with alerts.yaml', async (ctx) => {
    const run = await promtool(needPromtool(ctx), ['check', 'config', `${DIR}/prometheus.yaml`]);
    expect(run.code, run.output).toBe(0);
    expect(run.output).toContain('is valid prometheus config file syntax');
    expect(run.output).toContain('SUCCESS: 1 rule files found');
  });
});

describe('deploy/prometheus without promtool', () => {
  const groups = yamlOf('alerts.yaml').groups as RuleGroup[];

  it('prometheus-rule.yaml is a PrometheusRule whose groups are those of alerts.yaml', () => {
    const rule = yamlOf('prometheus-rule.yaml');
    expect(rule.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(rule.kind).toBe('PrometheusRule');
    expect((rule.metadata as Mapping).name).toBe('bulk-extract');
    expect(rule.spec).toEqual({ groups });
  });

  it('the unit tests have, for every alert, a time when it fires and one when it does not', () => {
    expect(groups.flatMap((g) => g.rules.map((r) => r.alert)).sort()).toEqual(ALERTS);
    const tests = TESTS.flatMap((file) => yamlOf(file).tests as { alert_rule_test: RuleTest[] }[]);
    const cases = tests.flatMap((t) => t.alert_rule_test);
    for (const alert of ALERTS) {
      const of = cases.filter((c) => c.alertname === alert);
      expect(of.some((c) => c.exp_alerts.length > 0), `${alert} fires somewhere`).toBe(true);
      expect(of.some((c) => c.exp_alerts.length === 0), `${alert} is quiet somewhere`).toBe(true);
    }
  });

  it('every alert has a severity, a summary and a description naming the export (or the Job), and docs that exist', () => {
    for (const group of groups) {
      // The second line knows Kubernetes Jobs, not exports.
      const names = group.name === 'bulk-extract-kubernetes' ? '{{ $labels.job_name }}' : '{{ $labels.export }}';
      for (const rule of group.rules as { alert: string; labels: Mapping; annotations: Mapping }[]) {
        expect(['critical', 'warning'], rule.alert).toContain(rule.labels.severity);
        expect(rule.annotations.summary, rule.alert).toContain(names);
        const description = String(rule.annotations.description);
        expect(description, rule.alert).toContain(names);
        const links = [...description.matchAll(/\b(docs\/[\w-]+\.md)#([\w-]+)/g)];
        expect(links, `${rule.alert} points to the docs`).not.toEqual([]);
        for (const [link, file = '', anchor = ''] of links) {
          expect(anchors(readFileSync(join(ROOT, file), 'utf8')).has(anchor), `${rule.alert}: ${link}`).toBe(true);
        }
      }
    }
  });
});
