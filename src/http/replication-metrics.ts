/**
 * /metrics' replication series, read from INFO replication (as metrics.ts reads the other
 * sections): the role, the replicas a master sees with how far behind each one is (seconds since
 * its last acknowledgement, bytes of the stream it has not acknowledged), and on a replica its
 * link to the master. Every metric is registered from the start, so a dashboard finds its HELP
 * and TYPE on any node; the series with values appear where they apply.
 */
import { Gauge, type Registry } from 'prom-client'
import type { InfoValue } from '../commands/admin/info.js'
import { infoNumber, infoPart } from './info-values.js'

export class ReplicationMetrics {
  private readonly master: Gauge
  private readonly connectedReplicas: Gauge
  private readonly masterOffset: Gauge
  private readonly replicaLag: Gauge
  private readonly replicaOffsetLag: Gauge
  private readonly linkUp: Gauge
  private readonly lastIo: Gauge
  private readonly replicaOffset: Gauge

  constructor(registry: Registry) {
    const registers = [registry]
    const gauge = (name: string, help: string, labelNames: string[] = []): Gauge =>
      new Gauge({ name, help, labelNames, registers })
    this.master = gauge('bfs_replication_master', '1 on a master, 0 on a replica (INFO role)')
    this.connectedReplicas = gauge('bfs_connected_replicas', 'Replicas attached to this node (INFO connected_slaves)')
    this.masterOffset = gauge(
      'bfs_master_repl_offset_bytes',
      'Bytes of replication stream this node has produced or applied (INFO master_repl_offset)',
    )
    this.replicaLag = gauge(
      'bfs_replica_lag_seconds',
      'Seconds since each replica last acknowledged, on its master (INFO slaveN lag)',
      ['replica', 'state'],
    )
    this.replicaOffsetLag = gauge(
      'bfs_replica_offset_lag_bytes',
      'Bytes of stream each replica has not acknowledged yet, on its master (master_repl_offset - INFO slaveN offset)',
      ['replica', 'state'],
    )
    this.linkUp = gauge(
      'bfs_master_link_up',
      "1 while a replica's link to its master is up, else 0; on replicas only (INFO master_link_status)",
    )
    this.lastIo = gauge(
      'bfs_master_last_io_seconds',
      'Seconds since a replica last heard from its master; on replicas only (INFO master_last_io_seconds_ago)',
    )
    this.replicaOffset = gauge(
      'bfs_replica_repl_offset_bytes',
      "Bytes of the master's stream a replica has applied; on replicas only (INFO slave_repl_offset)",
    )
  }

  /** Sets every series from INFO replication's fields. */
  refresh(info: Map<string, InfoValue>): void {
    const number = (field: string): number | undefined => infoNumber(info.get(field))
    const masterOffset = number('master_repl_offset') ?? 0
    this.master.set(info.get('role') === 'slave' ? 0 : 1)
    this.connectedReplicas.set(number('connected_slaves') ?? 0)
    this.masterOffset.set(masterOffset)
    this.replicaLag.reset()
    this.replicaOffsetLag.reset()
    for (const [field, value] of info) {
      if (!/^slave\d+$/.test(field)) continue
      const part = (key: string): string | number | undefined => infoPart(value, key)
      const labels = { replica: `${part('ip') ?? ''}:${part('port') ?? ''}`, state: String(part('state') ?? '') }
      this.replicaLag.set(labels, Number(part('lag') ?? 0))
      this.replicaOffsetLag.set(labels, Math.max(0, masterOffset - Number(part('offset') ?? 0)))
    }
    for (const metric of [this.linkUp, this.lastIo, this.replicaOffset]) metric.reset()
    const status = info.get('master_link_status')
    if (status === undefined) return
    this.linkUp.set(status === 'up' ? 1 : 0)
    const lastIo = number('master_last_io_seconds_ago')
    if (lastIo !== undefined && lastIo >= 0) this.lastIo.set(lastIo)
    this.replicaOffset.set(number('slave_repl_offset') ?? 0)
  }
}
