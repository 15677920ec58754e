/**
 * The replica's block of INFO replication (redis 7.0 server.c genRedisInfoString, "role:slave"
 * through "replica_announced", in that order) and ROLE's reply on a replica (replication.c
 * roleCommand). The master side's INFO section prints this block in place of `role:master` while
 * the node is a replica, then the fields every node has (connected_slaves, master_replid, ...).
 * Sentinel parses the slave fields only after `role:slave`, so the order matters.
 */
import type { Config } from '../runtime/config.js'
import type { LinkState, ReplicaLink } from './replica-link.js'

export type InfoField = readonly [string, string | number]

/**
 * The replica's block, the fields after `role:slave` (master_host ... replica_announced); empty on
 * a master. The INFO section prints it right after `role`.
 */
export function replicaInfoFields(link: ReplicaLink, config: Config, nowMs: number): InfoField[] {
  if (link.state === 'none') return []
  const seconds = (ms: number): number => Math.floor((nowMs - ms) / 1000)
  const connected = link.state === 'connected'
  // redis: the master client's offsets while connected, else its cached master's, else 1.
  const offset = connected || link.hasHistory ? link.readOffset : 1
  const applied = connected || link.hasHistory ? link.appliedOffset : 1
  const fields: InfoField[] = [
    ['master_host', link.masterHost],
    ['master_port', link.masterPort],
    ['master_link_status', connected ? 'up' : 'down'],
    ['master_last_io_seconds_ago', connected ? seconds(link.lastIoMs) : -1],
    ['master_sync_in_progress', link.state === 'transfer' ? 1 : 0],
    ['slave_read_repl_offset', offset],
    ['slave_repl_offset', applied],
  ]
  const transfer = link.state === 'transfer' ? link.transfer : undefined
  if (transfer !== undefined) {
    const total = transfer.totalBytes
    fields.push(
      ['master_sync_total_bytes', total],
      ['master_sync_read_bytes', transfer.readBytes],
      ['master_sync_left_bytes', total - transfer.readBytes],
      ['master_sync_perc', (total !== 0 ? (transfer.readBytes / total) * 100 : 0).toFixed(2)],
      ['master_sync_last_io_seconds_ago', seconds(transfer.lastIoMs)],
    )
  }
  if (!connected)
    fields.push(['master_link_down_since_seconds', link.downSinceMs !== 0 ? seconds(link.downSinceMs) : -1])
  fields.push(
    ['slave_priority', config['replica-priority']],
    ['slave_read_only', config['replica-read-only'] ? 1 : 0],
    ['replica_announced', config['replica-announced'] ? 1 : 0],
  )
  return fields
}

/** ROLE's state word for the link (redis roleCommand). */
const ROLE_STATES: Record<LinkState, string> = {
  none: 'none',
  connect: 'connect',
  connecting: 'connecting',
  handshake: 'handshake',
  transfer: 'sync',
  connected: 'connected',
}

/** ROLE on a replica: `slave`, host, port, the link's state, the applied offset (-1 while not connected). */
export function replicaRole(link: ReplicaLink): { host: string; port: number; state: string; offset: number } {
  return {
    host: link.masterHost,
    port: link.masterPort,
    state: ROLE_STATES[link.state],
    offset: link.state === 'connected' ? link.appliedOffset : -1,
  }
}
