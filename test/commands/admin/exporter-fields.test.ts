/**
 * docs/exporter-fields.md's promise: every redis_exporter INFO field it lists as appearing is in a
 * bfs's INFO (a master with appendonly yes), and every one listed for a replica in a replica's.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../helpers/start-server.js'
import { askRaw, RawClient } from '../../helpers/resp.js'

const doc = readFileSync(new URL('../../../docs/exporter-fields.md', import.meta.url), 'utf8')

/** The field names of the table under a `## ` heading that starts with `heading`. */
function tableFields(heading: string): string[] {
  const section = doc.split('\n## ').find((part) => part.startsWith(heading))
  if (section === undefined) throw new Error(`no section ${heading}`)
  return [...section.matchAll(/^\| `([a-z_0-9]+)` \|/gm)].map((match) => match[1]!)
}

async function infoFields(port: number): Promise<Set<string>> {
  const client = await RawClient.connect(port)
  try {
    const text = (await askRaw(client, 'INFO', 'everything')).toString('latin1')
    return new Set(
      text
        .split('\r\n')
        .filter((line) => /^[a-z_0-9|]+:/.test(line))
        .map((line) => line.slice(0, line.indexOf(':'))),
    )
  } finally {
    client.close()
  }
}

describe('redis_exporter fields (docs/exporter-fields.md)', () => {
  let master: RunningServer
  let replica: RunningServer

  beforeAll(async () => {
    master = await startServer({ appendonly: true })
    replica = await startServer({ replicaof: `127.0.0.1 ${master.port}` })
  })

  afterAll(async () => {
    await replica?.stop()
    await master?.stop()
  })

  it("lists at least a hundred fields as appearing, and each is in a master's INFO", async () => {
    const listed = tableFields('Appears (')
    expect(listed.length).toBeGreaterThanOrEqual(100)
    const fields = await infoFields(master.port)
    expect(listed.filter((field) => !fields.has(field))).toEqual([])
  })

  it("lists the replica's fields, each in a replica's INFO", async () => {
    const listed = tableFields('Appears on a replica')
    expect(listed).toContain('slave_priority')
    const fields = await infoFields(replica.port)
    expect(listed.filter((field) => !fields.has(field))).toEqual([])
  })

  it('gives a reason for every field that does not appear, and none of them appears', async () => {
    const section = doc.split('\n## ').find((part) => part.startsWith('Does not appear'))!
    const rows = [...section.matchAll(/^\| `([a-z_0-9]+)` \| (.+) \|$/gm)]
    expect(rows.length).toBeGreaterThan(0)
    const fields = await infoFields(master.port)
    for (const [, field, why] of rows) {
      expect(why!.trim().length).toBeGreaterThan(0)
      expect(fields.has(field!)).toBe(false)
    }
  })
})
