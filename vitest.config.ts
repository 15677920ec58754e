import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config'
import { nodeHasReusePort } from './src/runtime/io-threads-setting.js'

/**
 * Eight projects, all run by `npm test` (the two threads projects only on a Node.js with
 * `reusePort`):
 * - unit: every test that starts no server and needs no build (the pure core, the format, the
 *   protocol, the commands' unit tests, the store against a temporary directory), imported from
 *   src/ through vitest's TypeScript transform: `npm run test:unit`, the inner loop.
 * - unit-fresh: the unit tests that need the arenas' module state fresh (FRESH_ARENAS below).
 * - slow: the tests that take long or hold much memory: `npm run test:slow`. They run after the
 *   others, one file at a time, so that `npm test` never holds two of them at once.
 * - server: everything else (real servers over real sockets, child processes, the built package).
 * - huge: a filter larger than one WebAssembly memory (test/huge: a 5 GiB layer, about 6 GiB of
 *   RAM and 6 GiB of disk, a few minutes): `npm run test:huge`. Last, alone.
 * - distributed: several bfs processes replicating, and real redis-sentinel processes failing them
 *   over (test/distributed): `npm run test:distributed`. Last, one file at a time (each
 *   holds 3-4 servers and 3 Sentinels for tens of seconds).
 * - threads and threads-serial: the server files, then the slow and distributed ones (less
 *   SAME_WITH_THREADS; one file at a time) again, every bfs they start with `io-threads 4`
 *   (BFS_TEST_IO_THREADS: the test helpers pass it on, a test's own io-threads wins):
 *   `npm run test:threads`. Only on a Node.js that has `net` listen's `reusePort` (22.12 and 23.1
 *   on): an older one serves from one thread, as the server project has run already (there
 *   `npm run test:threads` finds no project). After the distributed project, before huge.
 */
const UNIT = [
  'test/architecture/**/*.test.ts',
  'test/core/**/*.test.ts',
  'test/format/**/*.test.ts',
  'test/protocol/{command-args,command-encoder,parser-fuzz,reply-reader,reply-values,reply-writer,request-parser}.test.ts',
  'test/commands/kernel/{args,glob,table}.test.ts',
  'test/store/**/*.test.ts',
  'test/cluster/cluster-state.test.ts', // the other files of test/cluster start servers
  'test/runtime/**/*.test.ts',
  'test/docs/configuration.test.ts',
  'test/http/query-value.test.ts',
]
const DISTRIBUTED = ['test/distributed/**/*.test.ts']
const HUGE = ['test/huge/**/*.test.ts']
// Unit tests that say where the arenas place bitmaps (core/arena.ts keeps its arenas in module
// state): they need the arenas as their file leaves them, not as the unit files before them in
// the same worker left them (`isolate: false` shares module state between files).
const FRESH_ARENAS = ['test/core/arena.test.ts', 'test/core/window-arena.test.ts', 'test/core/bitmap-ops.test.ts']
const SLOW = [
  'test/store/huge-filter.test.ts', // a CRC over 4 GiB, a snapshot of a filter of more than 2^32 bits
  'test/docs/node-examples.test.ts', // type-checks and runs the docs' Node examples against the build
  'test/server/soak.test.ts',
  'test/server/c10k.test.ts',
  'test/deploy/container.test.ts', // builds the container image and runs it with podman
  'test/deploy/package.test.ts', // npm pack, npm install -g of the tarball
]

/** The server's I/O threads in the threads projects (io-threads of every bfs they start). */
const TEST_IO_THREADS = '4'
// Slow and distributed files the threads projects leave out: their run would be the same again.
const SAME_WITH_THREADS = [
  'test/store/huge-filter.test.ts', // starts no server
  'test/distributed/threads-concurrency.test.ts', // every server it starts has io-threads 4 already
]

const SERVER_FILES = { include: ['test/**/*.test.ts'], exclude: [...UNIT, ...SLOW, ...DISTRIBUTED, ...HUGE] }

const THREADS: TestProjectInlineConfiguration[] = nodeHasReusePort(process.version)
  ? [
      {
        extends: true,
        test: {
          name: 'threads',
          ...SERVER_FILES,
          env: { BFS_TEST_IO_THREADS: TEST_IO_THREADS },
          sequence: { groupOrder: 3 },
        },
      },
      {
        extends: true,
        test: {
          name: 'threads-serial',
          include: [...SLOW, ...DISTRIBUTED],
          exclude: SAME_WITH_THREADS,
          env: { BFS_TEST_IO_THREADS: TEST_IO_THREADS },
          maxWorkers: 1,
          // The distributed project's: its files hold several servers and Sentinels each.
          testTimeout: 180_000,
          hookTimeout: 180_000,
          sequence: { groupOrder: 4 },
        },
      },
    ]
  : []

// The json reporter's file is what .ci/run reads for its closing "N passed, N failed" line: one
// file with the totals of every project.
export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    setupFiles: ['test/helpers/byte-equality.ts'],
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results/vitest.json' },
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT, exclude: [...SLOW, ...FRESH_ARENAS], isolate: false } },
      { extends: true, test: { name: 'unit-fresh', include: FRESH_ARENAS } },
      { extends: true, test: { name: 'server', ...SERVER_FILES } },
      { extends: true, test: { name: 'slow', include: SLOW, maxWorkers: 1, sequence: { groupOrder: 1 } } },
      {
        extends: true,
        test: {
          name: 'distributed',
          include: DISTRIBUTED,
          maxWorkers: 1,
          testTimeout: 180_000,
          hookTimeout: 180_000,
          sequence: { groupOrder: 2 },
        },
      },
      ...THREADS,
      {
        extends: true,
        test: {
          name: 'huge',
          include: HUGE,
          maxWorkers: 1,
          testTimeout: 600_000,
          hookTimeout: 600_000,
          sequence: { groupOrder: 5 },
        },
      },
    ],
  },
})
