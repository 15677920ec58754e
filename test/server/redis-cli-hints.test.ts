/**
 * Interactive redis-cli in a terminal (tmux): redis-cli 7.0 builds its help and its hints from
 * COMMAND DOCS, so typing a command shows its arguments in grey after the cursor, and HELP prints
 * them with the summary. The screen is read with tmux capture-pane.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { hasTool, runTool } from '../helpers/tools.js'
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.js'

describe.skipIf(!hasTool('tmux') || !hasTool('redis-cli'))('redis-cli hints and HELP in a terminal', () => {
  let running: RunningServer
  let home: string
  /** A tmux server of this file's own, so that nothing else's sessions are touched. */
  const socket = `bfs-hints-${process.pid}`
  const tmux = (...args: string[]) => runTool('tmux', ['-L', socket, ...args])

  async function screen(): Promise<string> {
    return (await tmux('capture-pane', '-p', '-t', 'cli')).stdout
  }

  /** Waits until the screen shows `text`, and returns the screen. */
  async function waitForScreen(text: string): Promise<string> {
    const deadline = Date.now() + 20_000
    for (;;) {
      const shown = await screen()
      if (shown.includes(text)) return shown
      if (Date.now() > deadline) throw new Error(`the screen never showed ${JSON.stringify(text)}:\n${shown}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  /** Types `keys` on an emptied prompt line. */
  async function type(keys: string): Promise<void> {
    await tmux('send-keys', '-t', 'cli', 'C-u')
    await tmux('send-keys', '-t', 'cli', '-l', keys)
  }

  beforeAll(async () => {
    running = await startServer()
    home = makeTempDir('bfs-cli-home-')
    const cli = `env HOME=${home} REDISCLI_HISTFILE=/dev/null redis-cli -h 127.0.0.1 -p ${running.port}`
    const started = await tmux('new-session', '-d', '-s', 'cli', '-x', '200', '-y', '50', cli)
    expect(started.code).toBe(0)
    await waitForScreen(`127.0.0.1:${running.port}>`)
  })

  afterAll(async () => {
    await tmux('kill-server')
    await running?.stop()
    removeTempDir(home)
  })

  it('typing SCAN shows its arguments as redis 7.0 documents them', async () => {
    await type('SCAN ')
    const shown = await waitForScreen('SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]')
    expect(shown).toContain(`127.0.0.1:${running.port}> SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]`)
  })

  it('a subcommand shows its own: CONFIG GET', async () => {
    await type('CONFIG GET ')
    await waitForScreen('> CONFIG GET parameter [parameter ...]')
  })

  it('typing BF.ADD shows key item; BF.INSERT drops what is typed', async () => {
    await type('BF.ADD ')
    await waitForScreen('> BF.ADD key item')
    await type('BF.INSERT f ')
    await waitForScreen(
      '> BF.INSERT f [CAPACITY capacity] [ERROR error] [EXPANSION expansion] [NOCREATE] [NONSCALING] ITEMS item [item ...]',
    )
  })

  it('HELP BF.ADD prints the arguments and the summary', async () => {
    await type('HELP BF.ADD')
    await tmux('send-keys', '-t', 'cli', 'Enter')
    const shown = await waitForScreen('summary: Adds an item to a Bloom Filter')
    expect(shown).toContain('  BF.ADD key item\n')
    expect(shown).toContain('  since: 1.0.0\n')
    expect(shown).toContain('  group: module\n')
  })
})
