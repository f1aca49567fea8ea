import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Ignore } from '@balena/dockerignore';
import { Copy, type Instruction } from 'dockerfile-ast';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { finish } from '../support/cli.js';
import {
  byKeyword,
  copyFrom,
  imageLayout,
  isExecForm,
  parseStages,
  shellCommands,
  type Stage,
  stageNamed,
  words,
  workdirAt,
} from './dockerfile-model.js';

/**
 * The Dockerfile and .dockerignore, checked without a Docker daemon: their structure, read with a
 * Dockerfile parser, and the runtime stage's files laid out in a temporary folder and run.
 */
// Docker's .dockerignore rules as ported from its Go code. Its typings declare an ES default
// export, but the module sets module.exports, which is what an import gets.
const dockerignore = createRequire(import.meta.url)('@balena/dockerignore') as () => Ignore;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The package that installs the Node runtime in a clone (CONTRIBUTING.md, "Node"). */
const NODE_RUNTIME = 'node';
const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { version?: string; dev?: boolean; hasInstallScript?: boolean }> };
const scripted = Object.entries(lock.packages).filter(([, entry]) => entry.hasInstallScript === true);
const manifest = JSON.parse(read('package.json')) as { devDependencies: Record<string, string>; allowScripts?: Record<string, boolean> };

const stages = parseStages(read('Dockerfile'));
const build = stages[0] as Stage;
const runtime = stages.at(-1) as Stage;
/** The shell commands of one RUN, or of every RUN of a stage, each as one string. */
const commandsOf = (run: Instruction) => shellCommands(run).map((command) => command.join(' '));
const runs = (stage: Stage) => byKeyword(stage, 'RUN').flatMap(commandsOf);
const last = (stage: Stage, keyword: string) => byKeyword(stage, keyword).at(-1);
const argsOf = (stage: Stage, keyword: string) => {
  const instruction = last(stage, keyword);
  return instruction === undefined ? [] : words(instruction);
};

const entrypoint = argsOf(runtime, 'ENTRYPOINT');
const script = entrypoint.find((word) => word.endsWith('/bin/bulk-extract.js'));
const appDir = posix.dirname(posix.dirname(script ?? '/'));
const dataDir = workdirAt(runtime);
const demo = loadConfig(join(ROOT, 'config/demo.yaml'), { DEMO_BASE_URL: 'http://127.0.0.1:1/api/v1/projects/demo', DEMO_TOKEN_URL: 'http://127.0.0.1:1/t', DEMO_CLIENT_SECRET: 'x' });
const outputVolume = posix.resolve(dataDir, demo.output.dir);

describe('Dockerfile', () => {
  it('builds in a first stage that installs with npm ci and runs npm test on the copied sources', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const commands = runs(build);
    expect(commands.some((c) => c.startsWith('npm ci'))).toBe(true);
    const copyAll = build.instructions.findIndex((i) => i instanceof Copy && words(i)[0] === '.');
    const test = build.instructions.findIndex((i) => i.getKeyword() === 'RUN' && commandsOf(i).includes('npm test'));
    expect(copyAll, 'COPY . . in the build stage').toBeGreaterThanOrEqual(0);
    expect(test, 'RUN npm test after COPY . .').toBeGreaterThan(copyAll);
  });

  it('copies dist/ from the stage that runs npm test, so BuildKit cannot skip the tests', () => {
    const dist = byKeyword(runtime, 'COPY').filter((c) => c instanceof Copy && words(c).some((w) => posix.basename(w) === 'dist'));
    const from = dist.map((c) => (c instanceof Copy ? copyFrom(c) : undefined));
    expect(from.length).toBeGreaterThan(0);
    for (const ref of from) expect(runs(stageNamed(stages, ref ?? '') ?? runtime)).toContain('npm test');
  });

  it('names an earlier stage in every COPY --from', () => {
    for (const stage of stages) {
      for (const copy of byKeyword(stage, 'COPY')) {
        const ref = copy instanceof Copy ? copyFrom(copy) : undefined;
        if (ref === undefined) continue;
        expect(stageNamed(stages, ref)?.index, `COPY --from=${ref} in stage ${stage.index}`).toBeLessThan(stage.index);
      }
    }
  });

  it('runs on a slim Node image of the build stage\'s major, an LTS line that engines allows', () => {
    const major = (stage: Stage) => Number(/^(\d+)(?:[.-]|$)/.exec(stage.from.getImageTag() ?? '')?.[1]);
    expect(build.from.getImageName()).toBe('node');
    expect(runtime.from.getImageName()).toBe('node');
    expect(runtime.from.getImageTag()).toMatch(/^\d+(\.\d+)*(-[a-z]+)?-slim$/);
    expect(major(runtime)).toBe(major(build));
    expect(major(runtime) % 2, 'even majors are the LTS lines').toBe(0);
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    expect(major(runtime)).toBeGreaterThanOrEqual(Number(/\d+/.exec(engines)?.[0]));
  });

  it('names one Node major everywhere the project runs: the images, .nvmrc, the runtime package a clone installs, @types/node', () => {
    const major = Number(/^(\d+)/.exec(build.from.getImageTag() ?? '')?.[1]);
    const majorOf = (version: string | undefined) => Number(/(\d+)/.exec(version ?? '')?.[1]);
    expect({
      nvmrc: majorOf(read('.nvmrc').trim()),
      runtimePackage: majorOf(lock.packages[`node_modules/${NODE_RUNTIME}`]?.version),
      typesNode: majorOf(lock.packages['node_modules/@types/node']?.version),
    }).toEqual({ nvmrc: major, runtimePackage: major, typesNode: major });
  });

  it('installs only production dependencies in the runtime stage, and none needs an install script', () => {
    const installs = runs(runtime).filter((c) => c.startsWith('npm ci') || c.startsWith('npm install'));
    expect(installs).toHaveLength(1);
    expect(installs[0]).toMatch(/ --omit=dev\b/);
    expect(installs[0]).toMatch(/ --ignore-scripts\b/);
    expect(scripted.filter(([, entry]) => entry.dev !== true).map(([path]) => path), 'production packages with install scripts').toEqual([]);
  });

  it('installs with --ignore-scripts in the build stage, where the packages with an install script are the Node runtime, approved by version and removed, and protobufjs, denied', () => {
    // Both stages install with --ignore-scripts; a package that needs its script would break there.
    // The Node runtime package is the exception: its script downloads the Node a clone runs on,
    // which the image does not need; it is removed so that the tests run on the image's own Node.
    // protobufjs (under azurite, through its telemetry's gRPC exporter) has a postinstall that only
    // warns when the project itself depends on protobufjs with another range: denied, never run.
    const runtimePackage = `node_modules/${NODE_RUNTIME}`;
    const denied = 'protobufjs';
    expect(scripted.map(([path]) => path).sort(), 'packages with install scripts (the build stage skips them: see Dockerfile)')
      .toEqual([runtimePackage, `node_modules/${denied}`].sort());
    expect(lock.packages[`node_modules/${denied}`]?.dev, `${denied} is a development package only`).toBe(true);
    const version = lock.packages[runtimePackage]?.version;
    expect(manifest.devDependencies[NODE_RUNTIME]).toBe(version);
    expect(manifest.allowScripts, 'allowScripts approves the runtime\'s install script for its version only, and denies protobufjs\'s')
      .toEqual({ [`${NODE_RUNTIME}@${version}`]: true, [denied]: false });
    const commands = runs(build);
    const install = commands.findIndex((c) => c.startsWith('npm ci') || c.startsWith('npm install'));
    expect(commands[install]).toMatch(/ --ignore-scripts\b/);
    const removal = commands.findIndex((c) => c.startsWith('rm -rf ') &&
      [runtimePackage, `node_modules/.bin/${NODE_RUNTIME}`].every((path) => c.split(' ').includes(path)));
    expect(removal, `rm -rf ${runtimePackage} node_modules/.bin/${NODE_RUNTIME} after the build stage's npm ci`).toBeGreaterThan(install);
    expect(removal, 'before npm test').toBeLessThan(commands.indexOf('npm test'));
  });

  it('puts bin, dist, package.json and node_modules under the entrypoint\'s folder, and the demo config in the working directory', () => {
    const layout = imageLayout(stages, runtime);
    const paths = [...layout.entries.map((e) => e.imagePath), ...layout.npmCi.map((n) => posix.join(n.dir, 'node_modules'))];
    for (const name of ['bin', 'dist', 'package.json', 'package-lock.json', 'node_modules']) expect(paths).toContain(posix.join(appDir, name));
    expect(paths).toContain(posix.join(dataDir, 'config'));
    for (const entry of layout.entries) expect(existsSync(join(ROOT, entry.repoPath)), entry.repoPath).toBe(true);
  });

  it('runs as a non-root user that owns the output volume', () => {
    const user = argsOf(runtime, 'USER')[0] ?? '';
    expect(user.split(':')[0]).not.toMatch(/^(root|0|)$/);
    const volume = runtime.instructions.findIndex((i) => i.getKeyword() === 'VOLUME');
    const chown = runtime.instructions.findIndex((i, index) => index < volume && i.getKeyword() === 'RUN' &&
      commandsOf(i).some((c) => c.startsWith(`chown ${user}`) && c.split(' ').includes(outputVolume)));
    expect(chown, `chown ${user} ${outputVolume} before VOLUME (later changes to a volume path are discarded)`).toBeGreaterThanOrEqual(0);
  });

  it('has an exec-form ENTRYPOINT that runs node on bin/bulk-extract.js (through tini, installed) and an exec-form CMD', () => {
    const [entry, cmd] = [last(runtime, 'ENTRYPOINT'), last(runtime, 'CMD')];
    expect(entry !== undefined && isExecForm(entry)).toBe(true);
    expect(entrypoint[entrypoint.indexOf(script ?? '') - 1]).toBe('node');
    if (entrypoint[0]?.endsWith('tini')) expect(runs(runtime).some((c) => /^apt-get install .*\btini\b/.test(c))).toBe(true);
    else expect(entrypoint[0]).toBe('node');
    expect(cmd !== undefined && isExecForm(cmd), 'a shell-form CMD would reach the CLI as /bin/sh -c ...').toBe(true);
  });

  it('declares /config and the folder the demo writes to as volumes', () => {
    const volumes = byKeyword(runtime, 'VOLUME').flatMap(words);
    expect(volumes).toContain('/config');
    expect(volumes).toContain(outputVolume);
  });
});

describe('.dockerignore', () => {
  const ignored = dockerignore().add(read('.dockerignore').split('\n'));

  it('leaves out installed, generated and credential files', () => {
    const out = ['node_modules/pino/package.json', 'bench/node_modules/x/index.js', 'dist/index.js', '.git/HEAD', 'out/_SUCCESS', 'demo-out/_DEMO',
      'coverage/index.html', 'npm-debug.log', 'CPU.20261121.cpuprofile', '.env', 'job.env', 'config/job.env'];
    expect(out.filter((path) => !ignored.ignores(path))).toEqual([]);
  });

  it('keeps every file the build stage needs', () => {
    const folders = ['src', 'test', 'bench', 'scripts', 'config', 'bin'];
    const files = folders.flatMap((folder) => readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' }).map((f) => `${folder}/${f}`));
    files.push('package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'vitest.config.ts', 'eslint.config.js',
      'Dockerfile', '.dockerignore', '.nvmrc');
    expect(files.length).toBeGreaterThan(100);
    expect(files.filter((path) => ignored.ignores(path))).toEqual([]);
  });
});

describe('the runtime stage\'s files', () => {
  it('run the demo export with production dependencies only', { timeout: 120_000 }, async ({ annotate }) => {
    const root = mkdtempSync(join(tmpdir(), 'bulk-extract-image-'));
    try {
      const layout = imageLayout(stages, runtime);
      for (const { imagePath, repoPath } of layout.entries) {
        cpSync(join(ROOT, repoPath), join(root, imagePath), { recursive: true });
      }
      for (const { dir, args } of layout.npmCi) {
        const note = await installProductionDependencies(join(root, dir), args);
        if (note !== undefined) await annotate(note);
      }
      const env = { PATH: process.env.PATH, ...layout.env };
      const cwd = join(root, dataDir);
      mkdirSync(cwd, { recursive: true });
      const cli = [join(root, script ?? ''), ...entrypoint.slice(entrypoint.indexOf(script ?? '') + 1)];
      const help = await exec(process.execPath, [...cli, ...argsOf(runtime, 'CMD')], cwd, env);
      expect(help.code, help.stderr).toBe(0);
      expect(help.stdout).toContain('Usage: bulk-extract');
      const demoRun = await exec(process.execPath, [...cli, 'demo', '--assets', '300', '--events', '3000', '--log-level', 'warn'], cwd, env);
      expect(demoRun.code, demoRun.stderr).toBe(0);
      expect(demoRun.stderr).toMatch(/complete in .*\n\s+events\s+3,000 rows .* done\n\s+assets\s+300 rows .* done/);
      expect(existsSync(join(root, outputVolume, '_SUCCESS'))).toBe(true);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

/**
 * Runs the Dockerfile's own `npm ci` in `dir`, offline, from npm's cache: `npm ci` fills it (CI and
 * the build stage run one first). If the cache lacks a package, it copies instead the folders that
 * npm counts as production dependencies in this checkout, and says so.
 */
async function installProductionDependencies(dir: string, args: string[]): Promise<string | undefined> {
  const npm = await exec('npm', [...args, '--offline'], dir, process.env);
  if (npm.code === 0) return undefined;
  expect(npm.stderr, `npm ${args.join(' ')} --offline failed`).toContain('ENOTCACHED');
  const ls = await exec('npm', ['ls', '--omit=dev', '--all', '--parseable'], ROOT, process.env);
  expect(ls.code, ls.stderr).toBe(0);
  const modules = join(ROOT, 'node_modules');
  const paths = ls.stdout.split('\n').filter((path) => path.startsWith(`${modules}/`));
  for (const path of paths) cpSync(path, join(dir, relative(ROOT, path)), { recursive: true });
  return `npm's cache lacks a package, so the ${paths.length} production packages of npm ls --omit=dev were copied instead of npm ci`;
}

function exec(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  const child = spawn(command, args, { cwd, env });
  child.stdin.end();
  return finish(child);
}
