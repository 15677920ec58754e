/**
 * The pull authenticates: nodes whose clients need a password learn each other when masterauth
 * (and masteruser) name it, and a node without it is refused (NOAUTH) and learns nothing.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { sleep, waitUntil } from '../helpers/cluster-nodes.js'

const servers: RunningServer[] = []
const clients: Redis[] = []
afterAll(async () => {
  for (const client of clients) client.disconnect()
  await Promise.all(servers.map((server) => server.stop()))
})

async function node(masterauth: string): Promise<Redis> {
  const server = await startServer({ 'cluster-enabled': true, requirepass: 'secret', masterauth })
  servers.push(server)
  const client = new Redis({
    port: server.port,
    host: '127.0.0.1',
    password: 'secret',
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  })
  client.on('error', () => {})
  clients.push(client)
  return client
}

async function knownNodes(client: Redis): Promise<string | undefined> {
  return /cluster_known_nodes:(\d+)/.exec(String(await client.call('CLUSTER', 'INFO')))?.[1]
}

describe('the pull of CLUSTER NODES with requirepass', () => {
  it('nodes with masterauth learn each other; one without it learns nothing', async () => {
    const [a, b, outsider] = [await node('secret'), await node('secret'), await node('')]
    const aPort = servers[0]!.port
    expect(await b.call('CLUSTER', 'MEET', '127.0.0.1', String(aPort))).toBe('OK')
    for (const client of [a, b])
      await waitUntil('both know both', async () => (await knownNodes(client)) === '2', { timeoutMs: 20_000 })
    expect(await outsider.call('CLUSTER', 'MEET', '127.0.0.1', String(aPort))).toBe('OK')
    await sleep(1500)
    expect(await knownNodes(outsider)).toBe('1')
    expect(await knownNodes(a)).toBe('2')
  })
})
