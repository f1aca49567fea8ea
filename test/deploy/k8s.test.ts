import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ICronJob, IJob } from 'kubernetes-models/batch/v1';
import type { IConfigMap, IContainer, IPersistentVolumeClaim } from 'kubernetes-models/v1';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { duration } from '../../src/config/duration.js';
import { loadConfig } from '../../src/config/load-config.js';
import { isObjectStorageUrl } from '../../src/output/index.js';
import { parseStages, type Stage, workdirAt } from './dockerfile-model.js';
import {
  bytesOf,
  containerEnv,
  type Doc,
  failureAction,
  find,
  loadManifests,
  mountOf,
  schemaProblems,
  type Workload,
  workloads,
} from './k8s-model.js';

/**
 * deploy/k8s, checked without a cluster: every document against the Kubernetes schema of its kind
 * (unknown fields included), then what the schema cannot know: that the pods run the CLI the way
 * docs/container.md and the CLI's exit codes require.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const manifests = loadManifests(join(ROOT, 'deploy/k8s'));
/** The Prometheus Operator's PodMonitor is a custom resource: kubernetes-models has no schema of it. */
const isPodMonitor = (doc: Doc) => doc.apiVersion === 'monitoring.coreos.com/v1' && doc.kind === 'PodMonitor';
const builtIn = manifests.filter((m) => !isPodMonitor(m.doc));
const all = workloads(manifests);
const named = (name: string): Workload => {
  const workload = all.find((w) => w.name === name);
  if (workload === undefined) throw new Error(`no workload ${name} in deploy/k8s`);
  return workload;
};
const containerOf = (w: Workload): IContainer => {
  expect(w.pod.containers, w.where).toHaveLength(1);
  return w.pod.containers[0] as IContainer;
};
const backfill = named('bulk-extract-backfill');
const incremental = named('bulk-extract-incremental');
/** The measured peak RSS of a Parquet export (bench/RESULTS.md, the largest figure). */
const PARQUET_PEAK_RSS = 465e6;
/** The image's user `node` (docs/container.md). */
const UID = 1000;
const CLI_COMMANDS = ['run', 'finalize'];
const FAIL_AT_ONCE = [2, 3];
const RESUMABLE = [1, 130];
/** Another run of the folder is still going: the CronJob's Job ends, a backfill's index retries. */
const OVERLAP = 75;

/** The job file of the ConfigMap that `--config` names, loaded as bulk-extract does in the pod. */
const temp = mkdtempSync(join(tmpdir(), 'k8s-job-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));
function jobFileOf(w: Workload) {
  const container = containerOf(w);
  const args = container.args ?? [];
  const path = args[args.indexOf('--config') + 1] ?? '';
  const found = mountOf(w.pod, container, path);
  const source = found?.volume.configMap;
  const relativePath = path.slice((found?.mount.mountPath.length ?? 0) + 1);
  const key = source?.items === undefined ? relativePath : source.items.find((i) => i.path === relativePath)?.key;
  const text = find<IConfigMap>(manifests, 'ConfigMap', source?.name ?? '')?.data?.[key ?? ''];
  if (text === undefined) throw new Error(`${w.where}: --config ${path} is not a key of a ConfigMap of deploy/k8s mounted there`);
  const file = join(temp, `${w.name}.yaml`);
  writeFileSync(file, text);
  return { text, config: loadConfig(file, containerEnv(container, manifests)) };
}

describe('deploy/k8s manifests', () => {
  it('hold the objects the README lists, each name once per kind', () => {
    const ids = manifests.map(({ doc }) => `${String(doc.kind)}/${String((doc.metadata as Doc).name)}`);
    expect(ids.sort()).toEqual([
      'ConfigMap/bulk-extract-azure-job', 'ConfigMap/bulk-extract-env', 'ConfigMap/bulk-extract-job',
      'CronJob/bulk-extract-azure', 'CronJob/bulk-extract-incremental',
      'Job/bulk-extract-backfill', 'Job/bulk-extract-finalize', 'PersistentVolumeClaim/bulk-extract-out',
      'PodMonitor/bulk-extract-incremental', 'Secret/bulk-extract-credentials', 'ServiceAccount/bulk-extract-azure',
    ]);
  });

  it.each(builtIn.map((m) => [m.where, m.doc] as const))('%s is valid against the Kubernetes schema', (_where, doc) => {
    expect(schemaProblems(doc)).toEqual([]);
  });
});

describe('the schema validation', () => {
  const mutated = (name: string, change: (doc: Doc) => void) => {
    const doc = structuredClone(manifests.find((m) => (m.doc.metadata as Doc).name === name)?.doc ?? {});
    change(doc);
    return schemaProblems(doc);
  };
  const spec = (doc: Doc) => doc.spec as Doc;
  const podSpec = (doc: Doc) => ((spec(doc).template as Doc).spec as Doc);
  const cronPodSpec = (doc: Doc) => ((((spec(doc).jobTemplate as Doc).spec as Doc).template as Doc).spec as Doc);
  const firstContainer = (doc: Doc) => (podSpec(doc).containers as Doc[])[0] as Doc;

  it.each([
    ['a string for an integer', 'bulk-extract-backfill', (d: Doc) => { spec(d).completions = 'four'; },
      { path: '/spec/completions', message: 'must be integer' }],
    ['a string for a recent integer field', 'bulk-extract-backfill', (d: Doc) => { spec(d).maxFailedIndexes = 'none'; },
      { path: '/spec/maxFailedIndexes', message: 'must be integer' }],
    ['a container without a name', 'bulk-extract-backfill', (d: Doc) => { delete firstContainer(d).name; },
      { path: '/spec/template/spec/containers/0', message: 'must have required property name' }],
    ['an action outside the enum', 'bulk-extract-backfill', (d: Doc) => {
      ((spec(d).podFailurePolicy as Doc).rules as Doc[]).push({ action: 'Retry', onExitCodes: { operator: 'In', values: [1] } });
    }, { path: '/spec/podFailurePolicy/rules/2/action', message: 'must be equal to one of the allowed values' }],
    ['an unknown field in the pod spec', 'bulk-extract-incremental', (d: Doc) => { cronPodSpec(d).restartPolicyy = 'Never'; },
      { path: '/spec/jobTemplate/spec/template/spec/restartPolicyy', message: 'unknown field' }],
    ['a misspelt Job field', 'bulk-extract-backfill', (d: Doc) => { spec(d).backoffLimitsPerIndex = 3; },
      { path: '/spec/backoffLimitsPerIndex', message: 'unknown field' }],
    ['an unknown kind', 'bulk-extract-out', (d: Doc) => { d.kind = 'PersistentVolumeClaimX'; },
      { path: '', message: 'no schema for apiVersion v1, kind PersistentVolumeClaimX' }],
  ])('reports %s with its path', (_what, name, change, problem) => {
    expect(mutated(name, change)).toContainEqual(problem);
  });

  it('knows the recent Job fields the backfill uses, and the keys of maps are not unknown fields', () => {
    for (const field of ['backoffLimitPerIndex', 'maxFailedIndexes', 'podFailurePolicy', 'podReplacementPolicy']) {
      expect(backfill.job, field).toHaveProperty(field);
    }
    expect(mutated('bulk-extract-backfill', (d) => {
      ((d.metadata as Doc).labels as Doc)['example.com/any-key'] = 'x';
    })).toEqual([]);
  });
});

describe('the CronJob and Jobs', () => {
  it.each(all.map((w) => [w.where, w] as const))('%s: the image\'s CLI, through its entrypoint', (_where, w) => {
    const container = containerOf(w);
    expect(container.command, 'command would replace the ENTRYPOINT (tini)').toBeUndefined();
    expect(CLI_COMMANDS).toContain(container.args?.[0]);
    expect(container.image).toBe(containerOf(incremental).image);
    expect(container.env?.map((e) => e.name), 'Kubernetes sets it in Indexed Jobs').not.toContain('JOB_COMPLETION_INDEX');
  });

  it('backfill: an Indexed Job of K = completions = parallelism shards, K at most the job\'s partitions', () => {
    const args = containerOf(backfill).args ?? [];
    const k = Number(args[args.indexOf('--shards') + 1]);
    expect(backfill.job.completionMode).toBe('Indexed');
    expect(k).toBeGreaterThan(1);
    expect(backfill.job.completions).toBe(k);
    expect(backfill.job.parallelism).toBe(k);
    const { config } = jobFileOf(backfill);
    expect(k).toBeLessThanOrEqual(config.streams.reduce((sum, s) => sum + ('partitions' in s ? s.partitions : 1), 0));
    expect(backfill.job.backoffLimitPerIndex).toBeGreaterThan(0);
    expect(backfill.job.maxFailedIndexes).toBeLessThan(k);
  });

  it('incremental: one run at a time, not split among workers, suspended until the backfill completed', () => {
    const cron = find<{ spec: Doc }>(manifests, 'CronJob', incremental.name)?.spec;
    expect(cron?.concurrencyPolicy).toBe('Forbid');
    expect(cron?.suspend).toBe(true);
    expect(cron?.startingDeadlineSeconds).toBeGreaterThan(0);
    expect(containerOf(incremental).args?.some((a) => a.startsWith('--shard'))).toBe(false);
    expect(incremental.job.parallelism ?? 1).toBe(1);
  });

  const codes = all.flatMap((w) => [...FAIL_AT_ONCE, ...RESUMABLE, OVERLAP].map((code) => [w.where, code, w] as const));
  it.each(codes)('%s: exit code %i fails the Job at once only where retrying cannot help', (_where, code, w) => {
    const name = containerOf(w).name;
    expect(w.pod.restartPolicy).toBe('Never');
    expect(w.job.podReplacementPolicy, 'a replacement pod never runs beside the one it replaces').toBe('Failed');
    const atOnce = FAIL_AT_ONCE.includes(code) || (code === OVERLAP && w.kind === 'CronJob');
    expect(failureAction(w.job.podFailurePolicy, name, code)).toBe(atOnce ? 'FailJob' : 'Count');
    expect(failureAction(w.job.podFailurePolicy, name, code, ['DisruptionTarget'])).toBe('Ignore');
  });

  it.each(all.map((w) => [w.where, w] as const))('%s: every variable of the job file from the manifests, the secret from a Secret', (_where, w) => {
    const container = containerOf(w);
    const { text, config } = jobFileOf(w);
    const used = [...text.matchAll(/(?<!\$)\$\{(\w+)\}/g)].map((m) => m[1]);
    expect(Object.keys(containerEnv(container, manifests)).sort()).toEqual([...new Set(used)].sort());
    const auth = (parseYaml(text) as { source: { auth: { clientSecret: string } } }).source.auth;
    const secretVar = /^\$\{(\w+)\}$/.exec(auth.clientSecret)?.[1];
    expect(container.env?.find((e) => e.name === secretVar)?.valueFrom?.secretKeyRef).toBeDefined();
    expect(config.streams.map((s) => s.mode)).toEqual(config.streams.map(() => 'incremental'));
  });

  it.each(all.map((w) => [w.where, w] as const))('%s: output.dir on the output volume, writable, RWX where pods run in parallel', (_where, w) => {
    const { config } = jobFileOf(w);
    if (isObjectStorageUrl(config.output.dir)) {
      // Object storage: only the staging folder is local, on a writable emptyDir of its own size.
      const staging = config.output.azure?.staging ?? config.output.s3?.staging ?? '/tmp';
      const found = mountOf(w.pod, containerOf(w), staging);
      expect(found?.mount.readOnly ?? false).toBe(false);
      expect(found?.volume.emptyDir?.sizeLimit, 'the staging folder holds the open shards: give it a size').toBeDefined();
      expect(mountOf(w.pod, containerOf(w), '/config')?.mount.readOnly).toBe(true);
      return;
    }
    const workdir = workdirAt(parseStages(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')).at(-1) as Stage);
    const out = mountOf(w.pod, containerOf(w), posix.resolve(workdir, config.output.dir));
    expect(out?.mount.mountPath).toBe(posix.resolve(workdir, config.output.dir));
    expect(out?.mount.readOnly ?? false).toBe(false);
    const pvc = find<IPersistentVolumeClaim>(manifests, 'PersistentVolumeClaim', out?.volume.persistentVolumeClaim?.claimName ?? '');
    expect(pvc, 'a PersistentVolumeClaim of deploy/k8s').toBeDefined();
    if ((w.job.parallelism ?? 1) > 1) expect(pvc?.spec?.accessModes).toContain('ReadWriteMany');
    expect(mountOf(w.pod, containerOf(w), '/config')?.mount.readOnly).toBe(true);
  });

  it.each(all.map((w) => [w.where, w] as const))('%s: non-root uid 1000, read-only root, writable /tmp, 60 s to stop', (_where, w) => {
    const container = containerOf(w);
    const pod = w.pod.securityContext;
    const own = container.securityContext;
    expect(own?.runAsUser ?? pod?.runAsUser).toBe(UID);
    expect(own?.runAsNonRoot ?? pod?.runAsNonRoot).toBe(true);
    expect(pod?.fsGroup).toBe(UID);
    expect(own?.allowPrivilegeEscalation).toBe(false);
    expect(own?.capabilities?.drop).toEqual(['ALL']);
    expect((own?.seccompProfile ?? pod?.seccompProfile)?.type).toBe('RuntimeDefault');
    expect(own?.readOnlyRootFilesystem).toBe(true);
    expect(mountOf(w.pod, container, '/tmp')?.volume.emptyDir).toBeDefined();
    // Workload identity projects a token of its own (azure.workload.identity/use): the API's is never needed.
    expect(w.pod.automountServiceAccountToken).toBe(false);
    expect(w.pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(60);
  });

  it.each([backfill, incremental].map((w) => [w.where, w] as const))('%s: a memory limit above the measured peak, requests within limits', (_where, w) => {
    const { requests, limits } = containerOf(w).resources ?? {};
    expect(bytesOf(limits?.memory ?? 0)).toBeGreaterThan(PARQUET_PEAK_RSS);
    expect(bytesOf(requests?.memory ?? 0)).toBeGreaterThan(PARQUET_PEAK_RSS);
    expect(bytesOf(requests?.memory ?? 0)).toBeLessThanOrEqual(bytesOf(limits?.memory ?? 0));
    expect(requests?.cpu).toBeDefined();
  });
});

describe('Prometheus metrics of the CronJob', () => {
  const template = find<ICronJob>(manifests, 'CronJob', incremental.name)?.spec?.jobTemplate.spec?.template;
  const container = containerOf(incremental);
  const args = container.args ?? [];
  const port = Number(args[args.indexOf('--metrics-port') + 1]);

  it('--metrics-port is the container port named metrics, and the annotations say port and path', () => {
    expect(args).toContain('--metrics-port');
    expect(Number.isInteger(port) && port > 1024, 'a port an unprivileged user may bind').toBe(true);
    expect(container.ports).toContainEqual(expect.objectContaining({ name: 'metrics', containerPort: port }));
    expect(template?.metadata?.annotations).toEqual(expect.objectContaining({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': String(port),
      'prometheus.io/path': '/metrics',
    }));
  });

  /** The fields of the PodMonitor CRD (monitoring.coreos.com/v1) that these manifests may use. */
  const SPEC_FIELDS = ['selector', 'namespaceSelector', 'podMetricsEndpoints', 'jobLabel', 'podTargetLabels'];
  const ENDPOINT_FIELDS = ['port', 'path', 'scheme', 'interval', 'scrapeTimeout', 'honorLabels', 'relabelings', 'metricRelabelings'];
  const monitors = manifests.filter((m) => isPodMonitor(m.doc));

  it.each(monitors.map((m) => [m.where, m.doc] as const))('%s: selects the CronJob\'s pods, on its metrics port', (where, doc) => {
    const spec = doc.spec as { selector?: { matchLabels?: Record<string, string> }; podMetricsEndpoints?: Doc[] };
    expect(Object.keys(spec).filter((key) => !SPEC_FIELDS.includes(key)), `${where}: unknown spec fields`).toEqual([]);
    const selector = spec.selector?.matchLabels ?? {};
    expect(Object.keys(spec.selector ?? {}), `${where}: matchLabels only`).toEqual(['matchLabels']);
    expect(Object.keys(selector).length).toBeGreaterThan(0);
    expect(template?.metadata?.labels).toEqual(expect.objectContaining(selector));
    const selectsBackfill = Object.entries(selector).every(([key, value]) =>
      find<IJob>(manifests, 'Job', backfill.name)?.spec?.template.metadata?.labels?.[key] === value);
    expect(selectsBackfill, 'the backfill pods serve no metrics port').toBe(false);
    const endpoints = spec.podMetricsEndpoints ?? [];
    expect(endpoints.length).toBeGreaterThan(0);
    for (const endpoint of endpoints) {
      expect(Object.keys(endpoint).filter((key) => !ENDPOINT_FIELDS.includes(key)), `${where}: unknown endpoint fields`).toEqual([]);
      expect(container.ports?.map((p) => p.name)).toContain(endpoint.port);
      expect(endpoint.path ?? '/metrics').toBe(template?.metadata?.annotations?.['prometheus.io/path']);
    }
  });
});

describe('deploy/k8s: what a run leaves for the alerts, and what kubectl apply -f deploy/k8s/ applies', () => {
  it('kubectl apply -f deploy/k8s/ (the folder\'s own files, not its subfolders) holds no Secret', () => {
    const applied = manifests.filter((m) => !m.where.includes('/'));
    expect(applied.length).toBeGreaterThan(0);
    expect(applied.filter(({ doc }) => doc.kind === 'Secret').map((m) => m.where)).toEqual([]);
    expect(manifests.find(({ doc }) => doc.kind === 'Secret')?.where, 'the example Secret is kept, elsewhere').toMatch(/^examples\//);
  });

  it.each(all.map((w) => [w.where, w] as const))('%s: pushes its metrics to the Pushgateway of bulk-extract-env', (_where, w) => {
    const gateway = find<IConfigMap>(manifests, 'ConfigMap', 'bulk-extract-env')?.data?.PUSHGATEWAY_URL;
    expect(gateway).toMatch(/^https?:\/\/\S+$/);
    const { config } = jobFileOf(w);
    expect(config.metrics?.pushgateway).toBe(gateway);
  });

  it('the CronJob\'s runs stop within the hour, the backfill\'s within its deadline: activeDeadlineSeconds', () => {
    expect(incremental.job.activeDeadlineSeconds).toBeGreaterThan(0);
    expect(incremental.job.activeDeadlineSeconds).toBeLessThan(3600);
    expect(backfill.job.activeDeadlineSeconds).toBeGreaterThan(3600);
  });

  it.each([
    ['the CronJob', () => incremental],
    ['the backfill', () => backfill],
  ])('%s publishes its activeDeadlineSeconds as --metrics-run-deadline, for BulkExtractRunDiedOrHung', (_, of) => {
    const w = of();
    const args = containerOf(w).args ?? [];
    expect(args).toContain('--metrics-run-deadline');
    const deadlineMs = duration.parse(args[args.indexOf('--metrics-run-deadline') + 1]);
    expect(deadlineMs).toBe((w.job.activeDeadlineSeconds ?? 0) * 1000);
  });
});
