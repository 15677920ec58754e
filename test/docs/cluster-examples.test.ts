/**
 * docs/operations/cluster.md is pasted into a shell by newcomers. Its set-up blocks (create,
 * reshard) run in test/distributed/cluster-cli.test.ts: every `redis-cli --cluster` command they use
 * must be one that test runs. The Sentinel blocks must parse, and the block that writes the
 * Sentinel configs, run against a cluster's CLUSTER NODES (a stand-in redis-cli on PATH prints one;
 * a stand-in redis-sentinel starts nothing), must write for each Sentinel exactly the lines the
 * distributed test gives real Sentinels (cluster-shards.ts), each master that owns slots named
 * shard-N in the order of its first slot. Its Node examples run in
 * test/distributed/cluster-clients.test.ts: what they import must be what that test uses. Runs
 * `bash`, starts no server.
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { shardSentinelLines } from '../helpers/cluster-shards.js'
import { docBlock, REPO_ROOT } from '../helpers/doc-blocks.js'
import { tempDirRemovedAfterAll } from '../helpers/temp-dir.js'

const SENTINEL_BLOCKS = [docBlock('cluster-sentinels'), docBlock('cluster-kill'), docBlock('cluster-failover')].map(
  (block) => block.body,
)
const SETUP_BLOCKS = [docBlock('cluster-create'), docBlock('cluster-reshard')].map((block) => block.body)
const CLIENT_BLOCKS = [docBlock('node-redis-cluster'), docBlock('ioredis-cluster')].map((block) => block.body)

const read = (file: string): string => readFileSync(path.join(REPO_ROOT, file), 'utf8')

/** CLUSTER NODES of a cluster of three shards, the masters listed out of slot order, one master without slots. */
const NODES = [
  'a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1 127.0.0.1:7003@17003 master - 0 1700000000000 3 connected 10923-16383',
  'b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2 127.0.0.1:7001@17001 myself,master - 0 0 1 connected 0-5460',
  'c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3 127.0.0.1:7004@17004 slave a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1 0 1700000000000 3 connected',
  'd4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4 127.0.0.1:7002@17002 master - 0 1700000000000 2 connected 5461-10922 [5462->-a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1]',
  'e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5 127.0.0.1:7007@17007 master - 0 1700000000000 0 connected',
].join('\n')

describe('the cluster set-up of docs/operations/cluster.md', () => {
  const blocks = SENTINEL_BLOCKS
  const work = tempDirRemovedAfterAll('bfs-readme-cluster-failover-')

  it.each([...SETUP_BLOCKS, ...blocks].map((block, i) => [i + 1, block] as const))(
    'block %i parses (bash -n)',
    (_, block) => {
      const result = spawnSync('bash', ['-n'], { input: block, encoding: 'utf8' })
      expect(result.stderr).toBe('')
      expect(result.status).toBe(0)
    },
  )

  it("writes each Sentinel's config: the distributed test's lines, a master name per shard in slot order", () => {
    const bin = path.join(work, 'bin')
    mkdirSync(bin)
    writeFileSync(
      path.join(bin, 'redis-cli'),
      `#!/bin/sh\n[ "$3 $4" = "CLUSTER NODES" ] || exit 1\ncat <<'EOF'\n${NODES}\nEOF\n`,
    )
    writeFileSync(path.join(bin, 'redis-sentinel'), '#!/bin/sh\nexit 0\n')
    for (const tool of ['redis-cli', 'redis-sentinel']) chmodSync(path.join(bin, tool), 0o755)
    const result = spawnSync('bash', ['-e', '-c', `${blocks[0]!}\nwait\necho "$SENTINELS"`], {
      cwd: work,
      encoding: 'utf8',
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, TMPDIR: work },
    })
    expect(result.stderr).toBe('')
    expect(result.status).toBe(0)
    const dir = result.stdout.trim().split('\n').at(-1)!
    expect(path.dirname(dir)).toBe(work)
    const shards = [
      { name: 'shard-0', masterPort: 7001 },
      { name: 'shard-1', masterPort: 7002 },
      { name: 'shard-2', masterPort: 7003 },
    ]
    for (const port of [26381, 26382, 26383]) {
      const written = readFileSync(path.join(dir, String(port), 'sentinel.conf'), 'utf8')
      const sentinelDir = path.join(dir, String(port))
      expect(written.trim().split('\n')).toEqual(
        shardSentinelLines(port, sentinelDir, shards).map((line) => line.replace(/^dir (.*)$/, 'dir "$1"')),
      )
    }
  })

  it('uses only the redis-cli --cluster commands test/distributed/cluster-cli.test.ts runs', () => {
    const tested = read('test/distributed/cluster-cli.test.ts')
    const used = SETUP_BLOCKS.flatMap((block) =>
      [...block.matchAll(/redis-cli --cluster ([a-z-]+)/g)].map((match) => match[1]!),
    )
    expect(used).toEqual(expect.arrayContaining(['create', 'check', 'reshard', 'add-node', 'rebalance']))
    // The call may break its line after `clusterCli(`.
    for (const command of used) {
      expect(tested, `redis-cli --cluster ${command}`).toMatch(new RegExp(`clusterCli\\(\\s*'${command}'`))
    }
  })

  it('imports in its client examples what test/distributed/cluster-clients.test.ts runs', () => {
    const tested = read('test/distributed/cluster-clients.test.ts')
    for (const block of CLIENT_BLOCKS) {
      for (const [, names] of block.matchAll(/^import \{ ([^}]+) \} from /gm)) {
        for (const name of names!.split(',').map((word) => word.trim())) expect(tested, name).toContain(name)
      }
    }
  })
})
