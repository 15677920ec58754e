import { defineConfig } from 'vitest/config'

// The json reporter's file is what .ci/run reads for its closing "N passed, N failed" line.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results/vitest.json' },
  },
})
