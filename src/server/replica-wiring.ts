/**
 * The replica link's host (replication/replica-host.ts), made from the server: the session the
 * master's commands run in, the dataset swap of a full sync, and the master side's hooks.
 */
import type { ClientSession, ServerContext } from '../commands/context.js'
import { FilterRegistry } from '../store/registry.js'
import type { ReplicaLinkHost } from '../replication/replica-host.js'
// STAND-IN until the sync-payload branch lands: then `import { SyncPayloadDecoder } from '../store/sync-payload-decoder.js'`.
import { SyncPayloadDecoder } from '../replication/sync-payload-standin.js'
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
}

/**
 * STAND-IN until the repl-master branch lands: nothing blocks yet and there is no backlog, so
 * there is nothing to do. At the merge these three call the master side's functions.
 */
export const MASTER_SIDE_UNTIL_MERGED: MasterSideHooks = {
  unblockAll: () => {},
  newHistory: () => {},
  ensureBacklog: () => {},
  becameMaster: () => {},
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
    ownPort: () => server.port,
    openMasterSession: (link) => {
      const session = createMasterSession(server, server.allocateClientId(), link)
      server.setMasterClient(session.client)
      return {
        run: (argv) => session.run(argv),
        touch: () => session.touch(),
        close: () => server.setMasterClient(undefined),
      }
    },
    newPayloadDecoder: () => new SyncPayloadDecoder({ maxFilterBytes: server.config['max-filter-bytes'] }),
    replaceDataset: (filters) => {
      const { registry, watchedKeys } = server
      // redis emptyData → signalFlushedDb: every WATCHed key, old or new, is touched.
      for (const name of registry.names()) watchedKeys.touch(name)
      registry.clear()
      for (const { name, filter } of filters) {
        const key = FilterRegistry.nameOf(name)
        registry.set(key, filter)
        watchedKeys.touch(key)
      }
    },
    disconnectReplicas: () => {
      for (const client of [...server.clients()]) if (client.kind === 'replica') client.kill()
    },
    unblockAll: (text) => masterSide.unblockAll(text),
    newHistory: () => masterSide.newHistory(),
    ensureBacklog: () => masterSide.ensureBacklog(),
    becameMaster: () => masterSide.becameMaster(),
  }
}
