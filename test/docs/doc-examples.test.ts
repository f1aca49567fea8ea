import { spawnSync } from 'node:child_process';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify } from 'yaml';
import { startupLine } from '../../src/cli/simulate.js';
import { loadConfig } from '../../src/config/load-config.js';
import { parseFaultSpec, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { faultOptionsSchema } from '../../src/simulator/options.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';
import { documentationBlocks, type FencedBlock, fencedBlocks } from './fenced-blocks.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const JOB_KEYS = ['source', 'streams', 'output', 'checkpoint', 'metrics'];
/** What a fragment of a job lacks to be one: a source and a stream. */
const BASE = {
  source: { baseUrl: 'https://acme.example.com/api/v1/projects/demo', auth: { type: 'api-key', apiKey: '${API_KEY}' } },
  streams: [{ resource: 'events' }],
};
const NAMED: Readonly<Record<string, string>> = { CLUSTER: 'acme', PROJECT: 'demo', TENANT_ID: 'tenant', CLIENT_ID: 'client' };

type Mapping = Record<string, unknown>;
const isMapping = (value: unknown): value is Mapping =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** A plausible value for every `${VAR}` a text references (credentials get a fake secret). */
function placeholders(text: string): Record<string, string> {
  const names = [...text.matchAll(/(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((match) => match[1] ?? '');
  const value = (name: string) =>
    NAMED[name] ?? (/SECRET|KEY|TOKEN|PASSWORD|COOKIE/.test(name) ? 'placeholder-secret' : 'placeholder');
  return Object.fromEntries(names.map((name) => [name, value(name)]));
}

/** The fragment, with the base's keys where it has none (and the base source's under its source). */
function completeJob(fragment: Mapping): Mapping {
  const source = isMapping(fragment.source) ? { source: { ...BASE.source, ...fragment.source } } : {};
  return { ...BASE, ...fragment, ...source };
}

let simulator: Simulator;
beforeAll(async () => {
  simulator = await startSimulator({ assets: 1, events: 1 });
});
afterAll(() => simulator.close());
afterEach(removeTempDirs);

interface Rule {
  name: string;
  matches: (block: FencedBlock, parsed: unknown) => boolean;
  check: (block: FencedBlock, parsed: unknown) => void;
}

/** What each yaml/json block of the docs is, and how it is checked; a block no rule matches fails. */
const RULES: Rule[] = [
  {
    name: 'a job file or a fragment of one: loads through loadConfig',
    matches: (_, parsed) => isMapping(parsed) && JOB_KEYS.some((key) => key in parsed),
    check: (block, parsed) => {
      const job = completeJob(parsed as Mapping);
      const text = isDeepStrictEqual(job, parsed) ? block.text : stringify(job);
      const file = join(tempDir('bulk-extract-doc-'), block.lang === 'json' ? 'job.json' : 'job.yaml');
      writeFileSync(file, text);
      try {
        loadConfig(file, placeholders(text));
      } catch (error) {
        expect.fail(`${block.where}: the example does not load: ${(error as Error).message}`);
      }
    },
  },
  {
    name: "the simulator's startup line: exactly the keys `simulate` prints",
    matches: (block, parsed) => block.lang === 'json' && isMapping(parsed) && 'baseUrl' in parsed && 'origin' in parsed,
    check: (block, parsed) => {
      expect(Object.keys(parsed as Mapping), block.where).toEqual(Object.keys(startupLine(simulator, 'demo')));
    },
  },
  {
    name: 'a fault profile (--faults): parses as one',
    matches: (block, parsed) =>
      block.lang === 'json' && isMapping(parsed) && Object.keys(parsed).some((key) => key in faultOptionsSchema.shape),
    check: (block) => {
      expect(() => parseFaultSpec(block.text), block.where).not.toThrow();
    },
  },
  {
    name: 'a Prometheus configuration (the failure drills): promtool check config, with the shipped alerts.yaml',
    matches: (_, parsed) => isMapping(parsed) && 'scrape_configs' in parsed,
    check: (block) => {
      const dir = tempDir('bulk-extract-doc-prometheus-');
      writeFileSync(join(dir, 'prometheus.yaml'), block.text);
      copyFileSync(join(ROOT, 'deploy/prometheus/alerts.yaml'), join(dir, 'alerts.yaml'));
      const check = spawnSync('promtool', ['check', 'config', 'prometheus.yaml'], { cwd: dir, encoding: 'utf8' });
      // Without promtool (Debian's package prometheus) only CI must have it, as in prometheus-rules.test.ts.
      if (check.error !== undefined && process.env.CI !== 'true') return;
      expect(check.error, `${block.where}: promtool`).toBeUndefined();
      expect(check.status, `${block.where}: ${check.stdout}${check.stderr}`).toBe(0);
    },
  },
];

/** JSON blocks must be JSON (not only YAML); every block must parse. */
function parseBlock(block: FencedBlock): unknown {
  try {
    return block.lang === 'json' ? JSON.parse(block.text) : parseYaml(block.text);
  } catch (error) {
    return expect.fail(`${block.where}: the ${block.lang} block does not parse: ${(error as Error).message}`);
  }
}

/**
 * The YAML a shell block writes with a heredoc (`cat > job.yaml <<'YAML'` ... `YAML`), as the
 * README's first job does: a yaml block of its own, at the line of its first line.
 */
function heredocs(block: FencedBlock): FencedBlock[] {
  const colon = block.where.lastIndexOf(':');
  const [file, fenceLine] = [block.where.slice(0, colon), Number(block.where.slice(colon + 1))];
  const lines = block.text.split('\n');
  const found: FencedBlock[] = [];
  lines.forEach((text, i) => {
    const word = /<<-?\s*'?(YAML|YML)'?\s*$/.exec(text)?.[1];
    if (word === undefined) return;
    const end = lines.indexOf(word, i + 1);
    const yaml = lines.slice(i + 1, end < 0 ? undefined : end).join('\n');
    found.push({ where: `${file}:${fenceLine + i + 2}`, lang: 'yaml', text: yaml });
  });
  return found;
}

const checked = documentationBlocks(ROOT)
  .flatMap((block) => (['sh', 'bash', 'shell'].includes(block.lang) ? heredocs(block) : [block]))
  .filter((block) => ['yaml', 'yml', 'json'].includes(block.lang));

describe('the yaml and json examples of README.md, docs/ and deploy/ (and the YAML of heredocs in their shell blocks)', () => {
  it('are found: the README\'s first job, the Configuration example, the S3 and incremental fragments, the simulator line', () => {
    const [job, startup] = RULES;
    const parsesAs = (rule: Rule | undefined) => (block: FencedBlock) => {
      const parsed: unknown = (() => {
        try {
          return parseYaml(block.text);
        } catch {
          return undefined;
        }
      })();
      return rule?.matches(block, parsed) === true;
    };
    const jobsIn = (file: string) => checked.filter((block) => block.where.startsWith(`${file}:`)).filter(parsesAs(job)).length;
    expect(jobsIn('README.md')).toBeGreaterThanOrEqual(1);
    expect(jobsIn('docs/configuration.md')).toBeGreaterThanOrEqual(1);
    expect(jobsIn('docs/object-storage.md')).toBeGreaterThanOrEqual(1);
    expect(jobsIn('docs/scheduled-exports.md')).toBeGreaterThanOrEqual(2);
    expect(checked.filter(parsesAs(startup))).toHaveLength(1);
  });

  it.each(checked.map((block) => [block.where, block] as const))('%s', (_, block) => {
    const parsed = parseBlock(block);
    const rule = RULES.find((candidate) => candidate.matches(block, parsed));
    if (rule === undefined) {
      expect.fail(`${block.where}: no rule of test/docs/doc-examples.test.ts says what this ${block.lang} block is; add one`);
    }
    rule.check(block, parsed);
  });
});

describe('the checks themselves', () => {
  it('fencedBlocks: languages, lines, indentation, ``` inside ~~~, an unclosed block', () => {
    const markdown = ['# T', '```yaml', 'a: 1', '```', '- item', '  ```json', '  {"b": 2}', '  ```', '~~~', '```', '~~~', '```sh', 'x'];
    expect(fencedBlocks(markdown.join('\n'), 'X.md')).toEqual([
      { where: 'X.md:2', lang: 'yaml', text: 'a: 1' },
      { where: 'X.md:6', lang: 'json', text: '{"b": 2}' },
      { where: 'X.md:9', lang: '', text: '```' },
      { where: 'X.md:12', lang: 'sh', text: 'x' },
    ]);
  });

  it('heredocs: the YAML between <<\'YAML\' and YAML of a shell block, at its line', () => {
    const [block] = fencedBlocks(['# T', '```sh', 'echo x', "cat > job.yaml <<'YAML'", 'a: 1', 'b: 2', 'YAML', 'run', '```'].join('\n'), 'X.md');
    expect(heredocs(block as FencedBlock)).toEqual([{ where: 'X.md:5', lang: 'yaml', text: 'a: 1\nb: 2' }]);
  });

  it('placeholders: by name, credentials get a fake secret, $${ is not a reference', () => {
    expect(placeholders('${CLUSTER} ${PROJECT} ${CLIENT_SECRET} ${API_KEY} ${BUCKET} $${LITERAL}')).toEqual({
      CLUSTER: 'acme',
      PROJECT: 'demo',
      CLIENT_SECRET: 'placeholder-secret',
      API_KEY: 'placeholder-secret',
      BUCKET: 'placeholder',
    });
  });

  it('completeJob: a fragment is merged into the base, never the other way round', () => {
    expect(completeJob({ output: { dir: 'x' } })).toEqual({ ...BASE, output: { dir: 'x' } });
    expect(completeJob({ streams: [{ resource: 'assets' }] })).toEqual({ ...BASE, streams: [{ resource: 'assets' }] });
    expect(completeJob({ source: { concurrency: 2 } }).source).toEqual({ ...BASE.source, concurrency: 2 });
  });

  it('the README example with `scopes: [https://${CLUSTER}...]` in a flow sequence would fail', () => {
    const [block] = fencedBlocks('```yaml\nsource:\n  auth:\n    scopes: [https://${CLUSTER}.example.com/.default]\n```', 'X.md');
    expect(() => parseBlock(block as FencedBlock)).toThrow(/X\.md:1: the yaml block does not parse/);
  });
});
