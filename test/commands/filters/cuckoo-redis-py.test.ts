/**
 * redis-py's own CF assertions run by redis-py itself against a real bfs: test/fixtures/
 * redis_py_cf.py mirrors test_bloom.py's test_create and test_bf_reserve CF lines,
 * test_cf_add_and_insert and test_cf_exists_and_del, and is run by a Python that has redis-py
 * (Debian's python3-redis: `python3`, or /usr/bin/python3 when `python3` is another
 * installation). Skipped only when no Python here can import redis.
 */
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../helpers/start-server.js'
import { runTool } from '../../helpers/tools.js'

const SCRIPT = fileURLToPath(new URL('../../fixtures/redis_py_cf.py', import.meta.url))

/** The first Python that imports redis-py, or undefined. */
function pythonWithRedis(): string | undefined {
  for (const python of ['python3', '/usr/bin/python3']) {
    const probe = spawnSync(python, ['-c', 'import redis'], { stdio: 'ignore' })
    if (probe.status === 0) return python
  }
  return undefined
}

const python = pythonWithRedis()

describe.skipIf(python === undefined)("redis-py's CF tests, run by redis-py", () => {
  let running: RunningServer

  beforeAll(async () => {
    running = await startServer()
  })

  afterAll(async () => {
    await running?.stop()
  })

  it('test_create and test_bf_reserve (CF lines), test_cf_add_and_insert, test_cf_exists_and_del pass', async () => {
    const result = await runTool(python!, [SCRIPT, String(running.port)], undefined, 60_000)
    expect(result.stderr).toBe('')
    expect(result.stdout.trim().split('\n')).toEqual([
      'ok test_create',
      'ok test_bf_reserve',
      'ok test_cf_add_and_insert',
      'ok test_cf_exists_and_del',
    ])
    expect(result.code).toBe(0)
  })
})
