/**
 * The replica link's host (replication/replica-host.ts), made from the server: the session the
 * master's commands run in, the dataset swap of a full sync, and the master side's hooks.
 */
import type { ClientSession, ServerContext } from '../commands/kernel/context.js'
import { FilterRegistry } from '../store/registry.js'
import type { ReplicaLinkHost } from '../replication/replica-host.js'
import { SyncPayloadDecoder } from '../store/sync-payload-decoder.js'
import { createMasterSession } from './master-session.js'

/** What the master side (the backlog, WAIT's blocking) does when the role changes. */
export interface MasterSideHooks {
  /** redis disconnectAllBlockedClients: `-<text>` to every blocked client, then closed. */
  unblockAll(text: string): void
  /** After a full sync: the backlog restarts empty at the adopted offset (redis freeReplicationBacklog + createReplicationBacklog). */
  newHistory(): void
  /** After +CONTINUE: a backlog exists from the current offset on (created if there is none; redis does it there). */
  ensureBacklog(): void
  /** After REPLICAOF NO ONE: a SELECT goes before the next record of the stream (redis slaveseldb = -1). */
  becameMaster(): void
  /** Closes every replica's connection (they reconnect and sync again). */
  disconnectReplicas(): void
}

export interface WiredServer extends ServerContext {
  allocateClientId(): number
  /** Sets or clears the master link's client in the client list. */
  setMasterClient(client: ClientSession | undefined): void
}

export function replicaLinkHost(server: WiredServer, masterSide: MasterSideHooks): ReplicaLinkHost {
  return {
    config: server.config,
    log: server.log,
    replication: server.replication,
    persistence: server.persistence,
    // redis syncWithMaster: a replica under tls-replication announces its TLS port.
    ownPort: () => (server.config['tls-replication'] && (server.tlsPort ?? 0) !== 0 ? server.tlsPort! : server.port),
    openMasterSession: (link) => {
      const session = createMasterSession(server, server.allocateClientId(), link)
      // The stream goes on in the database it was in (a full sync set it to 0).
      session.client.db = server.replication.streamDb
      server.setMasterClient(session.client)
      return {
        read: (work) => session.read(work),
        run: (argv) => session.run(argv),
        settle: () => session.settle(),
        close: () => {
          server.replication.streamDb = session.client.db
          server.setMasterClient(undefined)
        },
      }
    },
    // No size limit: the master holds these filters already, and a replica that refused one would
    // only ask for the same full sync again (a snapshot load applies none either).
    newPayloadDecoder: () => new SyncPayloadDecoder({ maxFilterBytes: 0 }, server.databases.count),
    replaceDataset: (filters) => {
      const { databases, watchedKeys } = server
      // redis emptyData → signalFlushedDb: every WATCHed key, old or new, is touched.
      for (const registry of databases.made())
        for (const name of registry.names()) watchedKeys.touch(registry.index, name)
      databases.clear()
      server.replication.streamDb = 0
      for (const { name, filter, expiresAt, db } of filters) {
        const key = FilterRegistry.nameOf(name)
        const registry = databases.db(db)
        const entry = registry.set(key, filter)
        // Expired or not: a replica deletes a key only when its master's DEL comes.
        if (expiresAt !== undefined) registry.setExpiry(entry, expiresAt)
        watchedKeys.touch(db, key)
      }
    },
    disconnectReplicas: () => masterSide.disconnectReplicas(),
    unblockAll: (text) => masterSide.unblockAll(text),
    newHistory: () => masterSide.newHistory(),
    ensureBacklog: () => masterSide.ensureBacklog(),
    becameMaster: () => masterSide.becameMaster(),
  }
}
