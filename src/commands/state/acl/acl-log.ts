/**
 * ACL LOG: denied commands, keys and channels, and failed AUTHs, newest first, as redis 7.0
 * acl.c addACLLogEntry keeps them: an entry like one of the 10 newest (same reason, context,
 * object and user, within 60 s) is counted there and moved to the front instead of added;
 * `acllog-max-len` bounds the list. redis 7.0.15's entries have 7 fields (7.2 added entry-id and
 * the timestamps).
 */
import type { ReplySink } from '../../../protocol/reply-sink.js'

export type AclDenial = 'command' | 'key' | 'channel' | 'auth'
export type AclLogContext = 'toplevel' | 'multi'

export interface AclLogEntry {
  count: number
  readonly reason: AclDenial
  readonly context: AclLogContext
  /** The command's full name, the key, the channel, or AUTH's own name (redis argv[0]). */
  readonly object: Buffer
  readonly username: Buffer
  /** ms of the last update. */
  time: number
  /** CLIENT LIST's line of the client (the last one, when updated). */
  clientInfo: string
}

/** redis ACL_LOG_GROUPING_MAX_TIME_DELTA. */
const GROUPING_MS = 60_000
/** redis addACLLogEntry's `toscan`. */
const SCANNED = 10

export class AclLog {
  private entries: AclLogEntry[] = []

  get length(): number {
    return this.entries.length
  }

  add(entry: Omit<AclLogEntry, 'count'>, maxLength: number): void {
    const limit = Math.min(SCANNED, this.entries.length)
    for (let i = 0; i < limit; i++) {
      const old = this.entries[i]!
      if (old.reason !== entry.reason || old.context !== entry.context || Math.abs(old.time - entry.time) > GROUPING_MS)
        continue
      if (!old.object.equals(entry.object) || !old.username.equals(entry.username)) continue
      old.count++
      old.time = entry.time
      old.clientInfo = entry.clientInfo
      this.entries.splice(i, 1)
      this.entries.unshift(old)
      return
    }
    this.entries.unshift({ ...entry, count: 1 })
    if (this.entries.length > maxLength) this.entries.length = Math.max(0, maxLength)
  }

  reset(): void {
    this.entries = []
  }

  /** ACL LOG [count]: the newest `count` entries, 7 fields each. */
  write(reply: ReplySink, count: number, now = Date.now()): void {
    const shown = this.entries.slice(0, Math.max(0, Math.min(count, this.entries.length)))
    reply.array(shown.length)
    for (const entry of shown) {
      reply.map(7)
      reply.bulk('count')
      reply.integer(entry.count)
      reply.bulk('reason')
      reply.bulk(entry.reason)
      reply.bulk('context')
      reply.bulk(entry.context)
      reply.bulk('object')
      reply.bulk(entry.object)
      reply.bulk('username')
      reply.bulk(entry.username)
      reply.bulk('age-seconds')
      reply.double((now - entry.time) / 1000)
      reply.bulk('client-info')
      reply.bulk(entry.clientInfo)
    }
  }
}
