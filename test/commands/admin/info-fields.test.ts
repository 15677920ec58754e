/**
 * INFO's instantaneous figures, used_memory_peak and mem_fragmentation_ratio over real sockets:
 * the fields in redis-server 7.0.15's order (checked against a real one), their formats, and
 * the rates moving once commands flow.
 */
import { describe, expect, it } from 'vitest'
import { besideRedis } from '../../helpers/beside-redis.js'
import { askRaw, encodeCommand } from '../../helpers/resp.js'

const servers = besideRedis()

async function info(port: number, section: string): Promise<Map<string, string>> {
  const client = await servers.connect(port)
  const text = (await askRaw(client, 'INFO', section)).toString('latin1')
  client.close()
  const fields = new Map<string, string>()
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':')
    if (colon > 0 && !line.startsWith('$')) fields.set(line.slice(0, colon), line.slice(colon + 1))
  }
  return fields
}

const NEW_FIELDS = {
  memory: [
    'used_memory',
    'used_memory_rss',
    'used_memory_peak',
    'used_memory_peak_human',
    'used_memory_peak_perc',
    'maxmemory_policy',
    'mem_fragmentation_ratio',
  ],
  stats: [
    'total_commands_processed',
    'instantaneous_ops_per_sec',
    'total_net_input_bytes',
    'total_net_output_bytes',
    'instantaneous_input_kbps',
    'instantaneous_output_kbps',
    'rejected_connections',
  ],
}

describe('INFO instantaneous figures and memory peak', () => {
  for (const [section, names] of Object.entries(NEW_FIELDS)) {
    it(`lists ${section}'s fields in redis 7.0.15's order`, async () => {
      const [ours, theirs] = [await info(servers.bfs.port, section), await info(servers.redis.port, section)]
      const order = (fields: Map<string, string>) => [...fields.keys()].filter((name) => names.includes(name))
      expect(order(theirs)).toEqual(names)
      expect(order(ours)).toEqual(names)
    })
  }

  it('formats them as redis does', async () => {
    const memory = await info(servers.bfs.port, 'memory')
    expect(Number(memory.get('used_memory_peak'))).toBeGreaterThanOrEqual(Number(memory.get('used_memory')))
    expect(memory.get('used_memory_peak_human')).toMatch(/^\d+\.\d\d[KMG]$/)
    expect(memory.get('used_memory_peak_perc')).toMatch(/^\d+\.\d\d%$/)
    expect(memory.get('mem_fragmentation_ratio')).toMatch(/^\d+\.\d\d$/)
    const stats = await info(servers.bfs.port, 'stats')
    expect(stats.get('instantaneous_ops_per_sec')).toMatch(/^\d+$/)
    expect(stats.get('instantaneous_input_kbps')).toMatch(/^\d+\.\d\d$/)
    expect(stats.get('instantaneous_output_kbps')).toMatch(/^\d+\.\d\d$/)
  })

  it('samples the rates in the cron: they rise while commands flow', async () => {
    const client = await servers.connect(servers.bfs.port)
    const batch = Buffer.concat(Array.from({ length: 200 }, (_, i) => encodeCommand(['BF.ADD', 'rates', `item${i}`])))
    // Sends until a cron sample saw the traffic (at most 1000 rounds; nothing is asserted on time).
    let stats = new Map<string, string>()
    const moving = () =>
      ['instantaneous_ops_per_sec', 'instantaneous_input_kbps', 'instantaneous_output_kbps'].every(
        (name) => Number(stats.get(name)) > 0,
      )
    for (let round = 0; round < 1000 && !moving(); round++) {
      client.write(batch)
      await client.read(200 * 4)
      await new Promise((resolve) => setTimeout(resolve, 10))
      stats = await info(servers.bfs.port, 'stats')
    }
    expect(Number(stats.get('instantaneous_ops_per_sec'))).toBeGreaterThan(0)
    expect(Number(stats.get('instantaneous_input_kbps'))).toBeGreaterThan(0)
    expect(Number(stats.get('instantaneous_output_kbps'))).toBeGreaterThan(0)
  })
})
