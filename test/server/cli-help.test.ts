/** `bfs --help`: the usage, every flag (config key) with its default, the config file, and where the full reference is. */
import { describe, expect, it } from 'vitest'
import { CONFIG_ROWS } from '../../src/runtime/config.js'
import { runTool } from '../helpers/tools.js'
import { BFS_MAIN } from '../helpers/child-server.js'

describe('bfs --help', () => {
  it('lists every flag with its default, the config file, and the full reference', async () => {
    const result = await runTool(process.execPath, [BFS_MAIN, '--help'])
    expect(result.code).toBe(0)
    const text = result.stdout
    expect(text).toMatch(/^Usage: bfs \[\/path\/to\/bfs\.conf\] \[--key value \.\.\.\]\n/)
    for (const row of CONFIG_ROWS) expect(text, row.name).toMatch(new RegExp(`^  --${row.name} `, 'm'))
    expect(text).toMatch(/^ {2}--port 6381 +TCP port/m)
    expect(text).toContain('a flag wins over the file')
    expect(text).toMatch(/example config: \S*bfs\.conf\.example$/m)
    expect(text).toMatch(/Full reference .*: \S*README\.md$/m)
    expect((await runTool(process.execPath, [BFS_MAIN, '-h'])).stdout).toBe(text)
  })
})
