/**
 * Issue 16 with real Sentinels and node-redis's createSentinel: kill -9 of the bfs master under
 * BF.ADD + WAIT 1, promotion, no acknowledged write lost, the old master rejoins as a replica.
 */
import { describe } from 'vitest'
import { NodeRedisWriter } from '../helpers/acked-writer.js'
import { killMasterScenario } from '../helpers/failover-scenario.js'
import { hasTool } from '../helpers/tools.js'

describe.skipIf(!hasTool('redis-sentinel'))(
  'Sentinel failover after kill -9 of the master, node-redis createSentinel',
  () => {
    killMasterScenario(async (sentinels) => {
      const writer = new NodeRedisWriter(sentinels)
      await writer.connect()
      return writer
    })
  },
)
