/**
 * A replica's replication position across restarts: a clean shutdown's final snapshot records
 * the replication id and offset in its MANIFEST, and the restarted replica continues with
 * `PSYNC <replid> <offset+1>`; after a kill -9 (the log replayed over the snapshot) it asks for a
 * full sync (`PSYNC ? -1`), as the data may be past any recorded offset. The master is played by
 * a TCP peer (fake-master.ts).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { rmSync, writeFileSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { Redis } from 'ioredis'
import { startServer } from '../helpers/start-server.js'
import { makeTempDir } from '../helpers/temp-dir.js'
import { childClient, killChildServer, startChildServer } from '../helpers/child-server.js'
import { buildPayload, FakeMaster, fullSyncDiskless, REPLID_A, type FakeLink } from '../helpers/fake-master.js'

const cleanups: (() => Promise<unknown> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function fakeMaster(): Promise<FakeMaster> {
  const master = await FakeMaster.start()
  cleanups.push(() => master.close())
  return master
}

function tempDir(): string {
  const dir = makeTempDir()
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

async function psyncOf(link: FakeLink): Promise<string[]> {
  await link.waitFor(() => link.received.some((argv) => argv[0] === 'PSYNC'), 10_000, 'PSYNC')
  return link.received.find((argv) => argv[0] === 'PSYNC')!
}

describe('a replica restarted', () => {
  it('cleanly continues with PSYNC <replid> <offset+1> from its final snapshot, pings included in the offset', async () => {
    const master = await fakeMaster()
    const dir = tempDir()
    master.onPsync = (link) => fullSyncDiskless(link, REPLID_A, 100, buildPayload([{ name: 'f', items: ['a'] }]))
    const config = { dir, appendonly: true, replicaof: `127.0.0.1 ${master.port}` }
    const replica = await startServer(config)
    const link = await master.link(0)
    expect(await psyncOf(link)).toEqual(['PSYNC', '?', '-1'])
    await link.waitForAck(100)
    const sent = link.send(['BF.ADD', 'f', 'b'], ['ping'])
    await link.waitForAck(100 + sent)
    await replica.server.close()
    expect(readFileSync(path.join(dir, 'snapshot', 'MANIFEST'), 'latin1')).toContain(
      `repl-id ${REPLID_A}\nrepl-offset ${100 + sent}\n`,
    )

    master.onPsync = (again) => again.write(`+CONTINUE ${REPLID_A}\r\n`)
    const restarted = await startServer(config)
    cleanups.push(() => restarted.server.close())
    expect(await psyncOf(await master.link(1))).toEqual(['PSYNC', REPLID_A, String(100 + sent + 1)])
    const client = new Redis({ port: restarted.port, host: '127.0.0.1' })
    cleanups.push(() => client.disconnect())
    expect(await client.call('BF.MEXISTS', 'f', 'a', 'b')).toEqual([1, 1])
  })

  it('after kill -9 asks for a full sync (PSYNC ? -1), with its data from its own log meanwhile', async () => {
    const master = await fakeMaster()
    const dir = tempDir()
    const conf = path.join(dir, 'bfs.conf')
    writeFileSync(conf, `appendonly yes\nappendfsync always\nsave ""\nreplicaof 127.0.0.1 ${master.port}\n`)
    master.onPsync = (link) => fullSyncDiskless(link, REPLID_A, 0, buildPayload([{ name: 'f', items: ['a'] }]))
    const first = await startChildServer([conf, '--port', '0', '--dir', dir])
    cleanups.push(() => first.bfs.kill())
    const link = await master.link(0)
    await link.waitForAck(0)
    const sent = link.send(['BF.ADD', 'f', 'b'])
    await link.waitForAck(sent)
    await killChildServer(first.bfs)

    master.onPsync = () => {}
    const second = await startChildServer([conf, '--port', '0', '--dir', dir])
    cleanups.push(() => second.bfs.kill())
    expect(await psyncOf(await master.link(1))).toEqual(['PSYNC', '?', '-1'])
    const client = childClient(second.port)
    cleanups.push(() => client.disconnect())
    expect(await client.call('BF.MEXISTS', 'f', 'a', 'b')).toEqual([1, 1])
  })
})
