/**
 * INFO replication, in redis 7.0's order (server.c genRedisInfoString): role, the replica's
 * block (role:slave, from the replica side), connected_slaves, min_slaves_good_slaves when
 * min-replicas-* are on, one `slaveN:ip=,port=,state=,offset=,lag=` line per replica (the lines
 * Sentinel discovers replicas from), then the ids, offsets and backlog.
 */
import type { ReplicationState } from './replication-state.js'
import { nowSeconds } from './replica-peer.js'
import type { MasterConfig, MasterSide } from './master-side.js'

/** A field: a value, or `key=value` pairs (INFO prints them joined by commas). */
export type InfoField = readonly [string, string | number | readonly (readonly [string, string | number])[]]

/**
 * The section's fields. `replicaFields` is the role:slave block after `role` (the replica side's
 * `replica-info.ts`; none on a master).
 */
export function replicationInfo(
  state: ReplicationState,
  master: MasterSide,
  config: MasterConfig,
  replicaFields: () => InfoField[] = () => [],
): InfoField[] {
  const fields: InfoField[] = [['role', state.role === 'master' ? 'master' : 'slave']]
  if (state.role === 'replica') fields.push(...replicaFields())
  fields.push(['connected_slaves', master.replicaCount])
  if (config['min-replicas-to-write'] > 0 && config['min-replicas-max-lag'] > 0)
    fields.push(['min_slaves_good_slaves', master.goodReplicaCount()])
  let id = 0
  const now = nowSeconds()
  for (const replica of master.attached()) {
    const lag = replica.state === 'online' ? now - replica.ackTimeSeconds : 0
    fields.push([
      `slave${id++}`,
      [
        ['ip', replica.ip],
        ['port', replica.listeningPort],
        ['state', replica.state],
        ['offset', replica.ackOffset],
        ['lag', lag],
      ],
    ])
  }
  const backlog = master.backlog
  fields.push(
    ['master_failover_state', 'no-failover'],
    ['master_replid', state.replid],
    ['master_replid2', state.replid2],
    ['master_repl_offset', state.masterReplOffset],
    ['second_repl_offset', state.secondReplOffset],
    ['repl_backlog_active', backlog === undefined ? 0 : 1],
    ['repl_backlog_size', config['repl-backlog-size']],
    ['repl_backlog_first_byte_offset', backlog?.firstByteOffset ?? 0],
    ['repl_backlog_histlen', backlog?.histlen ?? 0],
  )
  return fields
}
