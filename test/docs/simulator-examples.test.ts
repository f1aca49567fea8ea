import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { fencedBlocks } from './fenced-blocks.js';

/**
 * API keys are deprecated by the platform: what users copy to rehearse with the simulator (the
 * examples of README.md and docs/simulator.md, and the jobs of config/ that point at it) use the
 * simulator's demo OAuth client, so that what they rehearse is what they run in production.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** An API key in any of its spellings: a job's `type: api-key`/`apiKey`, the header, the simulator's `apiKeys`. */
const API_KEY = /api-?keys?\b|apiKey/i;

describe("the simulator's examples authenticate with OAuth client credentials, not an API key", () => {
  it.each(['README.md', 'docs/simulator.md'])('%s: no code block uses an API key', (file) => {
    const blocks = fencedBlocks(readFileSync(join(ROOT, file), 'utf8'), file);
    expect(blocks.length).toBeGreaterThan(0);
    const withKey = blocks.filter((block) => API_KEY.test(block.text)).map((block) => block.where);
    expect(withKey).toEqual([]);
  });

  it("config/: the jobs that point at the simulator (a loopback or the demo's address) use the token endpoint", () => {
    const jobs = readdirSync(join(ROOT, 'config')).filter((name) => name.endsWith('.yaml'));
    const simulated = jobs
      .map((name) => ({ name, job: parseYaml(readFileSync(join(ROOT, 'config', name), 'utf8')) as Job }))
      .filter(({ job }) => /127\.0\.0\.1|localhost|\$\{DEMO_/.test(job.source?.baseUrl ?? ''));
    expect(simulated.map(({ name }) => name)).toContain('demo.yaml');
    for (const { name, job } of simulated) expect(job.source?.auth?.type, name).toBe('oauth-client-credentials');
  });
});

interface Job {
  source?: { baseUrl?: string; auth?: { type?: string } };
}
