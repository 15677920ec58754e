/**
 * docs/operations/replication.md's "Three nodes and three Sentinels on one machine" is pasted into
 * a shell by newcomers: its shell blocks must parse, the block that writes the config files must write files
 * that bfs loads (loadConfig, as `bfs <file>` does) and Sentinel files made of the lines the
 * distributed tests give real redis-sentinel processes (cluster-sentinels.ts), and the writer's
 * JavaScript must parse. Runs `bash` and `node --check`, starts no server.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/runtime/config-load.js'
import { splitConfigLine } from '../../src/runtime/config-line.js'
import { MASTER_NAME, sentinelConfigLines } from '../helpers/cluster-sentinels.js'
import { docBlock } from '../helpers/doc-blocks.js'
import { tempDirRemovedAfterAll } from '../helpers/temp-dir.js'

// In the page's order; each id is the block's info string (```sh <id>).
const BLOCKS = [
  docBlock('replication-configs'),
  docBlock('replication-start'),
  docBlock('replication-check'),
  docBlock('replication-writer'),
  docBlock('replication-failover'),
  docBlock('replication-stop'),
].map((block) => block.body)
const NODE_PORTS = [6381, 6382, 6383]
const SENTINEL_PORTS = [26381, 26382, 26383]
const MASTER_PORT = 6381

function bash(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}) {
  return spawnSync('bash', args, { encoding: 'utf8', timeout: 30_000, ...options })
}

/** The words of each non-empty, non-comment line of a config file. */
function configLines(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.trim().startsWith('#'))
    .map((line) => splitConfigLine(line) ?? [`unbalanced quotes: ${line}`])
}

describe('the replication set-up of docs/operations/replication.md', () => {
  const work = tempDirRemovedAfterAll('bfs-readme-replication-')

  it('has the blocks: config files, start, check, writer, failover, stop', () => {
    expect(BLOCKS).toHaveLength(6)
  })

  it.each(BLOCKS.map((block, i) => [i + 1, block] as const))('block %i parses (bash -n)', (_, block) => {
    const result = bash(['-n'], { input: block })
    expect(result.stderr).toBe('')
    expect(result.status).toBe(0)
  })

  /** Runs the first block (it only writes files) in `work`; returns the directory it made. */
  function writeConfigs(): string {
    const block = BLOCKS[0]!
    expect(block, 'the config block starts nothing').not.toMatch(/redis-sentinel |node |&\s*$/m)
    const result = bash(['-e', '-c', `${block}\necho "$DEMO"`], { cwd: work, env: { ...process.env, TMPDIR: work } })
    expect(result.stderr).toBe('')
    expect(result.status).toBe(0)
    const demo = result.stdout.trim()
    expect(path.dirname(demo)).toBe(work)
    return demo
  }

  it('writes node configs that bfs loads: each its own port and dir, the replicas of 6381', () => {
    const demo = writeConfigs()
    for (const port of NODE_PORTS) {
      const text = readFileSync(path.join(demo, `node-${port}`, 'bfs.conf'), 'utf8')
      const config = loadConfig(text)
      expect(config.port).toBe(port)
      expect(config.dir).toBe(path.join(demo, `node-${port}`))
      expect(config.replicaof).toBe(port === MASTER_PORT ? '' : `127.0.0.1 ${MASTER_PORT}`)
    }
    expect(readdirSync(demo).sort()).toEqual([
      ...NODE_PORTS.map((p) => `node-${p}`),
      ...SENTINEL_PORTS.map((p) => `sentinel-${p}`),
    ])
  })

  it("writes Sentinel configs made of the distributed tests' lines, monitoring the master", () => {
    const demo = writeConfigs()
    for (const port of SENTINEL_PORTS) {
      const dir = path.join(demo, `sentinel-${port}`)
      const written = configLines(readFileSync(path.join(dir, 'sentinel.conf'), 'utf8'))
      const tested = configLines(sentinelConfigLines(port, dir, MASTER_PORT).join('\n'))
      for (const line of written)
        expect(tested, `a line the tests do not give redis-sentinel: ${line.join(' ')}`).toContainEqual(line)
      expect(written).toContainEqual(['sentinel', 'monitor', MASTER_NAME, '127.0.0.1', String(MASTER_PORT), '2'])
      expect(written.map((words) => words[0])).toContain('dir')
    }
  })

  it("the writer's JavaScript parses (node --check) and asks the three Sentinels for mymaster", () => {
    const writer = /node --input-type=module <<'EOF'\n([\s\S]*?)\nEOF\n/.exec(BLOCKS[3]!)
    expect(writer, 'no node heredoc in the writer block').not.toBeNull()
    const file = path.join(work, 'writer.mjs')
    writeFileSync(file, writer![1]!)
    const result = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8', timeout: 30_000 })
    expect(result.stderr).toBe('')
    expect(result.status).toBe(0)
    expect(writer![1]).toContain(`[${SENTINEL_PORTS.join(', ')}]`)
    expect(writer![1]).toContain(`name: '${MASTER_NAME}'`)
    expect(writer![1]).toContain("'WAIT', '1', '1000'")
  })
})
