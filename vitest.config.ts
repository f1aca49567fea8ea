import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    globalSetup: ['test/support/node-version-setup.ts'],
    // Generous, so that the suite passes on a 2-core machine busy with other work (CONTRIBUTING.md,
    // "Tests"): most tests take well under a second, the CLI and crash tests seconds each; a test
    // that hangs still fails, later. Tests that need more say so.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
