/**
 * ACL users from redis-cli: `--user --pass` on the command line (and a wrong password), and a
 * session through stdin that changes user with AUTH and is refused what its user may not run
 * (redis-cli prints an error with an empty line after it when its output is not a terminal).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../helpers/start-server.js'
import { hasTool, InteractiveTool, runTool } from '../../helpers/tools.js'

describe.skipIf(!hasTool('redis-cli'))('redis-cli with ACL users', () => {
  let running: RunningServer
  const cli = (...args: string[]) =>
    runTool('redis-cli', ['-h', '127.0.0.1', '-p', String(running.port), '--no-auth-warning', ...args])

  beforeAll(async () => {
    running = await startServer()
    expect(
      (await cli('ACL', 'SETUSER', 'web', 'on', '>web-pass', '%R~http-filter', '+bf.exists', '+ping')).stdout,
    ).toBe('OK\n')
    expect((await cli('BF.ADD', 'http-filter', 'known')).stdout).toBe('1\n')
  })

  afterAll(async () => {
    await running?.stop()
  })

  it('--user --pass runs as that user: BF.EXISTS answers, BF.ADD is refused with the NOPERM text', async () => {
    expect((await cli('--user', 'web', '--pass', 'web-pass', 'BF.EXISTS', 'http-filter', 'known')).stdout).toBe('1\n')
    expect((await cli('--user', 'web', '--pass', 'web-pass', 'BF.ADD', 'http-filter', 'new')).stdout).toBe(
      "NOPERM this user has no permissions to run the 'bf.add' command\n\n",
    )
    expect((await cli('--user', 'web', '--pass', 'web-pass', 'BF.EXISTS', 'other', 'x')).stdout).toBe(
      'NOPERM this user has no permissions to access one of the keys used as arguments\n\n',
    )
  })

  it('a wrong password: redis-cli reports AUTH failed', async () => {
    const result = await cli('--user', 'web', '--pass', 'wrong', 'PING')
    expect(result.stderr).toContain('AUTH failed: WRONGPASS invalid username-password pair or user is disabled.')
  })

  it('a session through stdin: AUTH changes the user, ACL WHOAMI says so, a denied command is refused', async () => {
    const session = InteractiveTool.start('redis-cli', ['-h', '127.0.0.1', '-p', String(running.port)])
    try {
      const say = async (line: string, expected: string): Promise<void> =>
        expect(await session.answer(line, expected.length)).toBe(expected)
      await say('ACL WHOAMI', 'default\n')
      await say('AUTH web nope', 'WRONGPASS invalid username-password pair or user is disabled.\n\n')
      await say('AUTH web web-pass', 'OK\n')
      await say('BF.EXISTS http-filter known', '1\n')
      await say('BF.ADD http-filter known', "NOPERM this user has no permissions to run the 'bf.add' command\n\n")
      await say('PING', 'PONG\n')
      session.child.stdin.end()
      expect(await session.waitExit()).toBe(0)
    } finally {
      session.kill()
    }
  })
})
