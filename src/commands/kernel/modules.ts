/** How bfs presents itself to tools that look for RedisBloom: MODULE LIST, HELLO, INFO modules. */
import type { ReplySink } from '../../protocol/reply-sink.js'

export const MODULE_NAME = 'bf'
/** RedisBloom 2.4.23 as MODULE LIST encodes it (major*10000 + minor*100 + patch). */
export const MODULE_VERSION = 20423

/** The module list of MODULE LIST and HELLO: one entry, RedisBloom's name and version. */
export function writeModuleList(reply: ReplySink): void {
  reply.array(1)
  reply.map(4)
  reply.bulk('name')
  reply.bulk(MODULE_NAME)
  reply.bulk('ver')
  reply.integer(MODULE_VERSION)
  reply.bulk('path')
  reply.bulk('bfs')
  reply.bulk('args')
  reply.array(0)
}
