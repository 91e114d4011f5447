import { defineConfig } from 'vitest/config';

// Unit tests run in parallel; end-to-end tests spawn processes and worker pools of their own, so
// they run one file at a time to keep a 2-core machine from timing them out.
// SLUICE_TEST_REPORT=<file> adds vitest's JSON report, from which .ci/run counts the results.
const report = process.env.SLUICE_TEST_REPORT;

export default defineConfig({
  test: {
    reporters: report ? ['default', ['json', { outputFile: report }]] : ['default'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['packages/*/src/**/*.test.ts'],
          testTimeout: 20_000,
        },
      },
      {
        // Type-level tests of the public API (test/*.test-d.ts): tsc checks them, nothing runs.
        test: {
          name: 'types',
          include: [],
          typecheck: { enabled: true, only: true, include: ['test/**/*.test-d.ts'], tsconfig: './test/tsconfig.types.json' },
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/**/*.test.ts'],
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
