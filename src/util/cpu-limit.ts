import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

/** A cgroup CPU quota: how many CPUs' worth of time the cgroup may use per period, and where it is set. */
export interface CpuQuota {
  /** quota / period; may be fractional (1.5 for "150000 100000"). */
  cpus: number;
  /** The file that holds it. */
  file: string;
}

/** The CPUs the process may use, and what that figure comes from. */
export interface CpuLimit {
  /** The smaller of `available` and the quota rounded up to whole CPUs; at least 1. */
  cpus: number;
  /** What os.availableParallelism() reports: the node's CPUs, or its affinity mask, never the quota. */
  available: number;
  /** The lowest quota along the process's cgroups, when there is one. */
  quota?: CpuQuota;
  /** Files that were there but could not be read or made no sense, each with why: ignored. */
  ignored: string[];
}

export interface CpuLimitOptions {
  /** Where /proc and /sys are found; default '/'. Tests pass a folder holding a fake tree. */
  root?: string;
  /** CPUs without a quota; default os.availableParallelism(). */
  available?: number;
}

/**
 * The CPUs this process may use: os.availableParallelism() sees the node's CPUs (or the affinity
 * mask) but not a container's CPU limit, which the kernel enforces as a cgroup quota, so a pod
 * limited to 2 CPUs on a 32-CPU node would size itself for 32. The quota is read from the cgroups
 * /proc/self/cgroup names, v2 (`cpu.max`) and v1 (`cpu.cfs_quota_us` / `cpu.cfs_period_us`), at the
 * process's cgroup and each parent up to the mount point (a parent's limit holds for its children),
 * and the smallest is taken. Anything missing, unreadable or unexpected counts as no quota: then
 * the figure is os.availableParallelism(), as without a container.
 */
export function cpuLimit(options: CpuLimitOptions = {}): CpuLimit {
  const root = options.root ?? '/';
  const available = Math.max(1, options.available ?? availableParallelism());
  const ignored: string[] = [];
  let quota: CpuQuota | undefined;
  for (const dir of cgroupDirs(root, ignored)) {
    const found = dir.version === 2 ? readV2(dir.path, ignored) : readV1(dir.path, ignored);
    if (found !== undefined && (quota === undefined || found.cpus < quota.cpus)) quota = found;
  }
  const cpus = quota === undefined ? available : Math.max(1, Math.min(available, Math.ceil(quota.cpus)));
  return { cpus, available, ...(quota === undefined ? {} : { quota }), ignored };
}

/** The figure and why, for a log line: which of the two numbers was used. */
export function describeCpuLimit(limit: CpuLimit): string {
  const seen = `os.availableParallelism() sees ${limit.available}`;
  const quota = limit.quota;
  let why: string;
  if (quota === undefined) why = `${seen}, no cgroup CPU limit found`;
  else if (limit.cpus < limit.available) why = `the cgroup CPU limit of ${quota.cpus} in ${quota.file}${Number.isInteger(quota.cpus) ? '' : ' rounded up'}; ${seen}`;
  else why = `${seen}; the cgroup CPU limit of ${quota.cpus} in ${quota.file} is no lower`;
  const ignored = limit.ignored.length === 0 ? '' : ` (ignored: ${limit.ignored.join('; ')})`;
  return `${limit.cpus} CPUs: ${why}${ignored}`;
}

interface CgroupDir {
  version: 1 | 2;
  path: string;
}

/**
 * The folders that may hold the process's CPU quota: for each cgroup of /proc/self/cgroup that
 * has the cpu controller (v2: the `0::` line; v1: a line whose controllers include `cpu`), its
 * folder under /sys/fs/cgroup and every parent up to the mount point. A container usually sees
 * only its own cgroup at the mount point, so the deeper folders are often absent.
 */
function cgroupDirs(root: string, ignored: string[]): CgroupDir[] {
  const file = join(root, 'proc/self/cgroup');
  const text = readText(file, ignored);
  if (text === undefined) return [];
  const dirs: CgroupDir[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const match = /^(\d+):([^:]*):(\/.*)$/.exec(line);
    const [, id, controllers = '', path = ''] = match ?? [];
    const segments = path.split('/').filter((segment) => segment !== '');
    if (match === null || segments.some((segment) => segment === '.' || segment === '..')) {
      ignored.push(`${file}: unexpected line ${JSON.stringify(line.slice(0, 100))}`);
      continue;
    }
    const v2 = id === '0' && controllers === '';
    if (!v2 && !controllers.split(',').includes('cpu')) continue;
    // v1 mounts a hierarchy at its controllers' names ("cpu,cpuacct"), most often with a "cpu" link.
    const mounts = v2 ? [''] : [...new Set([controllers, 'cpu'])];
    for (const mount of mounts) {
      for (let depth = segments.length; depth >= 0; depth--) {
        dirs.push({ version: v2 ? 2 : 1, path: join(root, 'sys/fs/cgroup', mount, ...segments.slice(0, depth)) });
      }
    }
  }
  return dirs;
}

/** cgroup v2: `cpu.max` is "<quota> <period>" in microseconds, or "max <period>" for no limit. */
function readV2(dir: string, ignored: string[]): CpuQuota | undefined {
  const file = join(dir, 'cpu.max');
  const text = readText(file, ignored);
  if (text === undefined) return undefined;
  const match = /^(max|\d+) ([1-9]\d*)$/.exec(text.trim());
  if (match === null) return unexpected(file, text, ignored);
  const [, quota = '', period = ''] = match;
  if (quota === 'max') return undefined;
  return quotaOf(Number(quota), Number(period), file, text, ignored);
}

/** cgroup v1: `cpu.cfs_quota_us` (-1 for no limit) over `cpu.cfs_period_us`, both in microseconds. */
function readV1(dir: string, ignored: string[]): CpuQuota | undefined {
  const file = join(dir, 'cpu.cfs_quota_us');
  const text = readText(file, ignored);
  if (text === undefined) return undefined;
  if (!/^-?\d+$/.test(text.trim())) return unexpected(file, text, ignored);
  const quota = Number(text.trim());
  if (quota === -1) return undefined;
  const periodFile = join(dir, 'cpu.cfs_period_us');
  const period = readText(periodFile, ignored);
  if (period === undefined) {
    ignored.push(`${file}: a quota without ${periodFile}`);
    return undefined;
  }
  if (!/^[1-9]\d*$/.test(period.trim())) return unexpected(periodFile, period, ignored);
  return quotaOf(quota, Number(period.trim()), file, text, ignored);
}

function quotaOf(quota: number, period: number, file: string, text: string, ignored: string[]): CpuQuota | undefined {
  if (!Number.isSafeInteger(quota) || !Number.isSafeInteger(period) || quota <= 0) {
    return unexpected(file, text, ignored);
  }
  return { cpus: quota / period, file };
}

function unexpected(file: string, text: string, ignored: string[]): undefined {
  ignored.push(`${file}: unexpected content ${JSON.stringify(text.trim().slice(0, 100))}`);
  return undefined;
}

/**
 * A file's text, or undefined when it cannot be read: absent (the usual case outside Linux, and
 * for the deeper folders in a container) silently, any other failure noted in `ignored`.
 */
function readText(file: string, ignored: string[]): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') ignored.push(`${file}: ${code ?? (error as Error).message}`);
    return undefined;
  }
}
