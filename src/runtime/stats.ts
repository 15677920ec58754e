/** Counters for INFO stats, reset by CONFIG RESETSTAT. */
export class Stats {
  commandsProcessed = 0
  connectionsReceived = 0
  rejectedConnections = 0
  netInputBytes = 0
  netOutputBytes = 0
  errorReplies = 0
  keyspaceHits = 0
  keyspaceMisses = 0
  /** Requests answered by the HTTP listener, any path. */
  httpRequests = 0
  /** Full syncs served, PSYNCs continued, PSYNCs refused (redis stat_sync_*). */
  syncFull = 0
  syncPartialOk = 0
  syncPartialErr = 0

  reset(): void {
    this.commandsProcessed = 0
    this.connectionsReceived = 0
    this.rejectedConnections = 0
    this.netInputBytes = 0
    this.netOutputBytes = 0
    this.errorReplies = 0
    this.keyspaceHits = 0
    this.keyspaceMisses = 0
    this.httpRequests = 0
    this.syncFull = 0
    this.syncPartialOk = 0
    this.syncPartialErr = 0
  }
}
