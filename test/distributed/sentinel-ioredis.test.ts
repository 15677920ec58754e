/**
 * Issue 16 with real Sentinels and an ioredis client in Sentinel mode: kill -9 of the bfs master
 * under BF.ADD + WAIT 1, promotion, no acknowledged write lost, the old master rejoins as a replica.
 */
import { describe } from 'vitest'
import { IoredisWriter } from '../helpers/acked-writer.js'
import { killMasterScenario } from '../helpers/failover-scenario.js'
import { hasTool } from '../helpers/tools.js'

describe.skipIf(!hasTool('redis-sentinel'))(
  'Sentinel failover after kill -9 of the master, ioredis in Sentinel mode',
  () => {
    killMasterScenario(async (sentinels) => new IoredisWriter(sentinels))
  },
)
