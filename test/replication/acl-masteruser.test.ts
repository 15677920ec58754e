/**
 * A replica that authenticates to its master as an ACL user (masteruser + masterauth: AUTH user
 * password in the handshake): with the rights replication needs (PING, REPLCONF, PSYNC) the link
 * comes up and writes flow; without PSYNC the master refuses it, and ACL LOG says so.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { infoFields, until } from '../helpers/replication-info.js'

const servers: RunningServer[] = []
const clients: Redis[] = []
afterEach(async () => {
  for (const client of clients.splice(0)) client.disconnect()
  for (const running of servers.splice(0).reverse()) await running.stop()
})

async function server(config: Parameters<typeof startServer>[0]): Promise<{ running: RunningServer; client: Redis }> {
  const running = await startServer(config)
  servers.push(running)
  const client = new Redis({ port: running.port, host: '127.0.0.1' })
  clients.push(client)
  return { running, client }
}

describe('masteruser', () => {
  it('a replica AUTHs as the replication user and follows the master', async () => {
    const master = await server({})
    await master.client.call('ACL', 'SETUSER', 'repl', 'on', '>repl-pass', '+psync', '+replconf', '+ping')
    await master.client.call('ACL', 'SETUSER', 'default', 'resetpass', '>admin-pass')
    const replica = await server({
      replicaof: `127.0.0.1 ${master.running.port}`,
      masteruser: 'repl',
      masterauth: 'repl-pass',
    })
    await until(
      async () => (await infoFields(replica.client, 'replication')).get('master_link_status') === 'up',
      'the link',
    )
    await master.client.call('BF.ADD', 'seen', 'https://a')
    await until(
      async () => (await replica.client.call('BF.EXISTS', 'seen', 'https://a')) === 1,
      'the write on the replica',
    )
    const list = (await master.client.call('CLIENT', 'LIST')) as string
    expect(list).toMatch(/flags=S .* user=repl /)
  })

  it('a replication user without PSYNC: the link stays down and the master logs the denial', async () => {
    const master = await server({})
    await master.client.call('ACL', 'SETUSER', 'repl', 'on', '>repl-pass', '+replconf', '+ping')
    await server({ replicaof: `127.0.0.1 ${master.running.port}`, masteruser: 'repl', masterauth: 'repl-pass' })
    await until(
      async () => ((await master.client.call('ACL', 'LOG')) as unknown[][]).some((entry) => entry[7] === 'psync'),
      'the denial',
    )
    const entry = ((await master.client.call('ACL', 'LOG')) as unknown[][]).find((found) => found[7] === 'psync')!
    expect(entry.slice(2, 10)).toEqual([
      'reason',
      'command',
      'context',
      'toplevel',
      'object',
      'psync',
      'username',
      'repl',
    ])
  })
})
