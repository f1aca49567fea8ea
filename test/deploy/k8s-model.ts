import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CronJob, type ICronJob, type IJob, type IJobSpec, Job, type IPodFailurePolicy } from 'kubernetes-models/batch/v1';
import {
  ConfigMap,
  type IConfigMap,
  type IContainer,
  type IPodSpec,
  type ISecret,
  type IVolume,
  type IVolumeMount,
  PersistentVolumeClaim,
  Secret,
  ServiceAccount,
} from 'kubernetes-models/v1';
import { parseAllDocuments } from 'yaml';

/**
 * The Kubernetes manifests of deploy/k8s, read and checked offline: the schemas are those that
 * kubernetes-models generates from the Kubernetes OpenAPI spec, compiled to ajv validators.
 */
export type Doc = Record<string, unknown>;

/** One YAML document of the manifests' folder. */
export interface Manifest {
  /** The file, relative to the folder, and the document's index in it. */
  where: string;
  doc: Doc;
}

export function loadManifests(dir: string): Manifest[] {
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.yaml')).sort();
  return files.flatMap((file) =>
    [...parseAllDocuments(readFileSync(join(dir, file), 'utf8'))].flatMap((document, index) => {
      if (document.errors.length > 0) throw new Error(`${file} #${index}: ${document.errors[0]?.message}`);
      const doc: unknown = document.toJS();
      if (doc === null) return [];
      if (typeof doc !== 'object' || Array.isArray(doc)) throw new Error(`${file} #${index}: not a mapping`);
      return [{ where: `${file} #${index}`, doc: doc as Doc }];
    }),
  );
}

export interface Problem {
  /** A JSON pointer into the document, as ajv reports it. */
  path: string;
  message: string;
}

interface Schema {
  apiVersion: string;
  kind: string;
  create: (doc: Doc) => { validate(): void };
}

const schema = <T>(model: { apiVersion: string; kind: string; new (data: T): { validate(): void } }): Schema => ({
  apiVersion: model.apiVersion,
  kind: model.kind,
  // The cast is what validate() then checks.
  create: (doc) => new model(doc as T),
});

/** The kinds deploy/k8s uses; another kind is reported as a problem, not skipped. */
const SCHEMAS = [
  schema(Secret), schema(ConfigMap), schema(PersistentVolumeClaim), schema(CronJob), schema(Job),
  schema(ServiceAccount),
];

/**
 * Validates a document against the schema of its apiVersion and kind. The generated validators
 * accept fields they do not know (as the API server does without strict field validation), so
 * unknown fields are found here: every field the validator never read is one its schema lacks.
 * Maps (labels, data, resources.limits) are read key by key, so their keys count as known.
 */
export function schemaProblems(doc: Doc): Problem[] {
  const found = SCHEMAS.find((s) => s.apiVersion === doc.apiVersion && s.kind === doc.kind);
  if (found === undefined) return [{ path: '', message: `no schema for apiVersion ${String(doc.apiVersion)}, kind ${String(doc.kind)}` }];
  const tracked = trackReads(found.create(doc));
  const problems: Problem[] = [];
  try {
    tracked.proxy.validate();
  } catch (error) {
    problems.push(...ajvErrors(error));
  }
  return [...problems, ...tracked.unread().map((path) => ({ path, message: 'unknown field' }))];
}

function ajvErrors(error: unknown): Problem[] {
  if (!(error instanceof Error) || !('errors' in error) || !Array.isArray(error.errors)) throw error;
  return error.errors.map((e: unknown) => {
    const { instancePath, message } = e as { instancePath?: unknown; message?: unknown };
    return { path: String(instancePath), message: String(message) };
  });
}

const pointer = (path: string, key: string) => `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;

/** Wraps an object so that the own fields read through it, at any depth, are recorded. */
function trackReads<T extends object>(root: T): { proxy: T; unread: () => string[] } {
  const objects = new Map<string, { target: object; read: Set<string> }>();
  const wrap = <V>(value: V, path: string): V => {
    if (value === null || typeof value !== 'object') return value;
    const entry = objects.get(path) ?? { target: value, read: new Set<string>() };
    objects.set(path, entry);
    return new Proxy(value, {
      get(target, key, receiver) {
        const field: unknown = Reflect.get(target, key, receiver);
        if (typeof key !== 'string' || !Object.hasOwn(target, key)) return field;
        entry.read.add(key);
        return wrap(field, pointer(path, key));
      },
    });
  };
  const unread = () => [...objects].flatMap(([path, { target, read }]) =>
    Array.isArray(target) ? [] : Object.keys(target).filter((key) => !read.has(key)).map((key) => pointer(path, key)));
  return { proxy: wrap(root, ''), unread };
}

/** A CronJob or Job of the manifests, with its Job spec and its pod's spec. */
export interface Workload {
  where: string;
  kind: 'CronJob' | 'Job';
  name: string;
  job: IJobSpec;
  pod: IPodSpec;
}

/** The CronJobs and Jobs; call after schemaProblems found none, so that the types hold. */
export function workloads(manifests: Manifest[]): Workload[] {
  return manifests.flatMap(({ where, doc }): Workload[] => {
    if (doc.kind !== 'CronJob' && doc.kind !== 'Job') return [];
    const job = doc.kind === 'CronJob' ? (doc as unknown as ICronJob).spec?.jobTemplate.spec : (doc as unknown as IJob).spec;
    const pod = job?.template.spec;
    if (job === undefined || pod === undefined) throw new Error(`${where}: no pod template`);
    return [{ where, kind: doc.kind, name: String((doc as unknown as IJob).metadata?.name), job, pod }];
  });
}

/** The object of a kind and name, as its interface. */
export function find<T>(manifests: Manifest[], kind: string, name: string): T | undefined {
  const named = (doc: Doc) => (doc.metadata as { name?: unknown } | undefined)?.name === name;
  return manifests.find((m) => m.doc.kind === kind && named(m.doc))?.doc as T | undefined;
}

/**
 * The action the Job controller takes on a failed pod: the first rule that matches its exit code
 * (`NotIn` never matches 0) or one of its conditions; without one, the failure counts against the
 * backoff limit.
 */
export function failureAction(
  policy: IPodFailurePolicy | undefined,
  container: string,
  exitCode: number,
  conditions: string[] = [],
): string {
  for (const rule of policy?.rules ?? []) {
    const codes = rule.onExitCodes;
    if (codes !== undefined && (codes.containerName === undefined || codes.containerName === container)) {
      const listed = codes.values.includes(exitCode);
      if (codes.operator === 'In' ? listed : !listed && exitCode !== 0) return rule.action;
    }
    if (rule.onPodConditions?.some((p) => p.status === 'True' && conditions.includes(p.type))) return rule.action;
  }
  return 'Count';
}

/** The container's environment as the kubelet would set it from the manifests' ConfigMaps and Secrets. */
export function containerEnv(container: IContainer, manifests: Manifest[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { name, value, valueFrom } of container.env ?? []) {
    const fromMap = valueFrom?.configMapKeyRef;
    const fromSecret = valueFrom?.secretKeyRef;
    let resolved: string | undefined = value;
    if (fromMap !== undefined) resolved = find<IConfigMap>(manifests, 'ConfigMap', fromMap.name ?? '')?.data?.[fromMap.key];
    if (fromSecret !== undefined) {
      const secret = find<ISecret>(manifests, 'Secret', fromSecret.name ?? '');
      const data = secret?.data?.[fromSecret.key];
      resolved = secret?.stringData?.[fromSecret.key] ?? (data === undefined ? undefined : Buffer.from(data, 'base64').toString());
    }
    if (resolved === undefined) throw new Error(`env ${name}: no value, or its ConfigMap/Secret key is not in deploy/k8s`);
    env[name] = resolved;
  }
  return env;
}

/** The volume mounted at `path` or at the nearest folder above it. */
export function mountOf(
  pod: IPodSpec,
  container: IContainer,
  path: string,
): { mount: IVolumeMount; volume: IVolume } | undefined {
  const mounts = (container.volumeMounts ?? []).filter((m) => path === m.mountPath || path.startsWith(`${m.mountPath}/`));
  const mount = mounts.sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
  const volume = pod.volumes?.find((v) => v.name === mount?.name);
  return mount === undefined || volume === undefined ? undefined : { mount, volume };
}

/** Bytes of a Kubernetes memory quantity (`768Mi`, `1Gi`, `500M`, `1e9`). */
export function bytesOf(quantity: string | number): number {
  const match = /^(\d+(?:\.\d+)?(?:e\d+)?)([KMGT]i?)?$/.exec(String(quantity));
  if (match === null) throw new Error(`not a memory quantity: ${quantity}`);
  const [, number = '', unit = ''] = match;
  const power = ' KMGT'.indexOf(unit.charAt(0) || ' ');
  return Number(number) * (unit.endsWith('i') ? 1024 : 1000) ** power;
}
