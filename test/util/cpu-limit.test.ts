import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CpuLimit, cpuLimit, describeCpuLimit } from '../../src/util/cpu-limit.js';

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** A fake /proc and /sys in a temporary folder: file paths relative to `/`, and their text. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'bulk-extract-cgroup-'));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** The limit read from a fake tree on a machine where os.availableParallelism() sees `available`. */
function limitOf(files: Record<string, string>, available = 8): CpuLimit & { root: string } {
  const root = tree(files);
  return { ...cpuLimit({ root, available }), root };
}

const V2 = { 'proc/self/cgroup': '0::/\n' };
const POD = '0::/kubepods.slice/kubepods-burstable.slice/kubepods-pod1.slice/cri-containerd-abc.scope\n';
const POD_DIRS = [
  'sys/fs/cgroup/kubepods.slice',
  'sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice',
  'sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/kubepods-pod1.slice',
  'sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/kubepods-pod1.slice/cri-containerd-abc.scope',
] as const;
/** As a v1 container sees it (Docker, Kubernetes with cgroup v1): its own cgroup at the mount point. */
const V1 = {
  'proc/self/cgroup': '12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n',
};

describe('cpuLimit: cgroup v2', () => {
  it('a limit ("200000 100000") lowers the CPUs to 2', () => {
    const limit = limitOf({ ...V2, 'sys/fs/cgroup/cpu.max': '200000 100000\n' });
    expect(limit).toMatchObject({ cpus: 2, available: 8, quota: { cpus: 2, file: join(limit.root, 'sys/fs/cgroup/cpu.max') } });
    expect(limit.ignored).toEqual([]);
  });

  it('"max 100000" is no limit: the CPUs os.availableParallelism() sees', () => {
    const limit = limitOf({ ...V2, 'sys/fs/cgroup/cpu.max': 'max 100000\n' });
    expect(limit.cpus).toBe(8);
    expect(limit.quota).toBeUndefined();
    expect(limit.ignored).toEqual([]);
  });

  it('a nested cgroup whose limit is on a parent (the pod) and none on itself gets the parent\'s', () => {
    const [slice, burstable, pod, container] = POD_DIRS;
    const limit = limitOf({
      'proc/self/cgroup': POD,
      [`${slice}/cpu.max`]: 'max 100000\n',
      [`${burstable}/cpu.max`]: 'max 100000\n',
      [`${pod}/cpu.max`]: '300000 100000\n',
      [`${container}/cpu.max`]: 'max 100000\n',
    });
    expect(limit).toMatchObject({ cpus: 3, quota: { cpus: 3, file: join(limit.root, pod, 'cpu.max') } });
  });

  it('along a nested path, the smallest limit wins, wherever it is', () => {
    const [slice, , pod, container] = POD_DIRS;
    const limit = limitOf({
      'proc/self/cgroup': POD,
      [`${slice}/cpu.max`]: '600000 100000\n',
      [`${pod}/cpu.max`]: '250000 50000\n',
      [`${container}/cpu.max`]: '400000 100000\n',
    });
    expect(limit).toMatchObject({ cpus: 4, quota: { cpus: 4, file: join(limit.root, container, 'cpu.max') } });
    const lower = limitOf({ 'proc/self/cgroup': POD, [`${slice}/cpu.max`]: '100000 100000', [`${container}/cpu.max`]: '400000 100000' });
    expect(lower.cpus).toBe(1);
  });

  it('a path shown from outside the cgroup namespace, with its folders absent, falls back to the mount point', () => {
    const limit = limitOf({ 'proc/self/cgroup': POD, 'sys/fs/cgroup/cpu.max': '200000 100000\n' });
    expect(limit.cpus).toBe(2);
  });
});

describe('cpuLimit: cgroup v1', () => {
  it('cpu.cfs_quota_us over cpu.cfs_period_us under /sys/fs/cgroup/cpu,cpuacct', () => {
    const limit = limitOf({
      ...V1,
      'sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us': '200000\n',
      'sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us': '100000\n',
    });
    expect(limit).toMatchObject({ cpus: 2, quota: { cpus: 2, file: join(limit.root, 'sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us') } });
  });

  it('or under /sys/fs/cgroup/cpu, the cpu controller mounted alone or linked, at a nested path too', () => {
    const alone = limitOf({
      'proc/self/cgroup': '2:cpuacct:/\n1:cpu:/\n',
      'sys/fs/cgroup/cpu/cpu.cfs_quota_us': '300000\n',
      'sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000\n',
    });
    expect(alone.cpus).toBe(3);
    const linked = limitOf({
      'proc/self/cgroup': '4:cpuacct,cpu:/kubepods/pod1/abc\n',
      'sys/fs/cgroup/cpu/kubepods/pod1/cpu.cfs_quota_us': '100000\n',
      'sys/fs/cgroup/cpu/kubepods/pod1/cpu.cfs_period_us': '100000\n',
    });
    expect(linked.cpus).toBe(1);
  });

  it('-1 is no limit', () => {
    const limit = limitOf({
      ...V1,
      'sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us': '-1\n',
      'sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us': '100000\n',
    });
    expect(limit).toMatchObject({ cpus: 8, ignored: [] });
    expect(limit.quota).toBeUndefined();
  });

  it('on a hybrid host (v2 mounted without the cpu controller), the v1 limit counts', () => {
    const limit = limitOf({
      'proc/self/cgroup': '5:cpu,cpuacct:/\n0::/\n',
      'sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us': '100000',
      'sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us': '100000',
    });
    expect(limit.cpus).toBe(1);
  });
});

describe('cpuLimit: rounding and the CPUs there are', () => {
  it.each([
    ['150000 100000', 1.5, 2],
    ['50000 100000', 0.5, 1],
    ['1000 100000', 0.01, 1],
    ['350001 100000', 3.50001, 4],
  ])('a fractional quota "%s" (%s CPUs) is rounded up to %s', (text, quota, cpus) => {
    const limit = limitOf({ ...V2, 'sys/fs/cgroup/cpu.max': text });
    expect(limit).toMatchObject({ cpus, quota: { cpus: quota } });
  });

  it('a quota larger than the CPUs there are leaves the CPUs there are', () => {
    const limit = limitOf({ ...V2, 'sys/fs/cgroup/cpu.max': '1600000 100000\n' }, 4);
    expect(limit).toMatchObject({ cpus: 4, available: 4, quota: { cpus: 16 } });
  });
});

describe('cpuLimit: anything missing, unreadable or unexpected is no quota, never a crash', () => {
  it('missing files: no /proc at all (not Linux), or no /sys/fs/cgroup', () => {
    expect(limitOf({})).toMatchObject({ cpus: 8, available: 8, ignored: [] });
    expect(limitOf({}).quota).toBeUndefined();
    expect(limitOf(V2)).toMatchObject({ cpus: 8, ignored: [] });
    expect(limitOf(V1)).toMatchObject({ cpus: 8, ignored: [] });
  });

  it('a v1 quota without its period is no quota, and says so', () => {
    const limit = limitOf({ ...V1, 'sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us': '200000\n' });
    expect(limit.cpus).toBe(8);
    expect(limit.ignored).toEqual([expect.stringMatching(/cpu\.cfs_quota_us: a quota without .*cpu\.cfs_period_us$/)]);
  });

  it.each([
    ['cpu.max', 'lots'],
    ['cpu.max', ''],
    ['cpu.max', '200000'],
    ['cpu.max', '200000 100000 7'],
    ['cpu.max', '0 100000'],
    ['cpu.max', '200000 0'],
    ['cpu.max', '-200000 100000'],
    ['cpu.max', '2.5 1'],
    ['cpu.max', '99999999999999999999 100000'],
    ['cpu.max', '\u0000\u00ff\ufffd'],
  ])('garbage in %s: %j', (name, text) => {
    const limit = limitOf({ ...V2, [`sys/fs/cgroup/${name}`]: text });
    expect(limit.cpus).toBe(8);
    expect(limit.quota).toBeUndefined();
    expect(limit.ignored).toEqual([expect.stringContaining(`${name}: unexpected content`)]);
  });

  it.each([
    ['lots', '100000'],
    ['0', '100000'],
    ['-2', '100000'],
    ['200000', 'often'],
    ['200000', '0'],
  ])('garbage in v1: quota %j, period %j', (quota, period) => {
    const limit = limitOf({
      ...V1,
      'sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us': quota,
      'sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us': period,
    });
    expect(limit.cpus).toBe(8);
    expect(limit.ignored).toEqual([expect.stringContaining('unexpected content')]);
  });

  it('garbage in /proc/self/cgroup: the lines that make no sense are ignored, the others still count', () => {
    const garbage = limitOf({ 'proc/self/cgroup': 'not a cgroup line\n\u0000\n', 'sys/fs/cgroup/cpu.max': '100000 100000' });
    expect(garbage.cpus).toBe(8);
    expect(garbage.ignored).toHaveLength(2);
    const mixed = limitOf({ 'proc/self/cgroup': 'junk\n0::/\n', 'sys/fs/cgroup/cpu.max': '100000 100000' });
    expect(mixed.cpus).toBe(1);
    expect(mixed.ignored).toEqual([expect.stringContaining('unexpected line "junk"')]);
  });

  it('a path that climbs out of the mount (..) is not followed', () => {
    const limit = limitOf({ 'proc/self/cgroup': '0::/../../etc\n', 'sys/fs/cgroup/cpu.max': '100000 100000' });
    expect(limit.cpus).toBe(8);
    expect(limit.ignored).toEqual([expect.stringContaining('unexpected line')]);
  });

  it('an unreadable file (a folder where cpu.max should be) is noted and ignored', () => {
    const root = tree({ ...V2, 'sys/fs/cgroup/cpu.max/inside': '' });
    const limit = cpuLimit({ root, available: 8 });
    expect(limit.cpus).toBe(8);
    expect(limit.ignored).toEqual([`${join(root, 'sys/fs/cgroup/cpu.max')}: EISDIR`]);
  });

  it('on this machine, with the real /proc and /sys: a figure between 1 and os.availableParallelism()', () => {
    const limit = cpuLimit();
    expect(limit.available).toBe(availableParallelism());
    expect(limit.cpus).toBeGreaterThanOrEqual(1);
    expect(limit.cpus).toBeLessThanOrEqual(limit.available);
  });
});

describe('describeCpuLimit: the figure used, and why', () => {
  const file = '/sys/fs/cgroup/cpu.max';
  it.each<[CpuLimit, string]>([
    [{ cpus: 8, available: 8, ignored: [] }, '8 CPUs: os.availableParallelism() sees 8, no cgroup CPU limit found'],
    [{ cpus: 2, available: 8, quota: { cpus: 2, file }, ignored: [] }, `2 CPUs: the cgroup CPU limit of 2 in ${file}; os.availableParallelism() sees 8`],
    [{ cpus: 2, available: 8, quota: { cpus: 1.5, file }, ignored: [] }, `2 CPUs: the cgroup CPU limit of 1.5 in ${file} rounded up; os.availableParallelism() sees 8`],
    [{ cpus: 4, available: 4, quota: { cpus: 16, file }, ignored: [] }, `4 CPUs: os.availableParallelism() sees 4; the cgroup CPU limit of 16 in ${file} is no lower`],
    [{ cpus: 8, available: 8, ignored: [`${file}: EACCES`] }, `8 CPUs: os.availableParallelism() sees 8, no cgroup CPU limit found (ignored: ${file}: EACCES)`],
  ])('%j', (limit, text) => {
    expect(describeCpuLimit(limit)).toBe(text);
  });
});
