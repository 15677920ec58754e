/**
 * CLUSTER FAILOVER [FORCE|TAKEOVER] (redis 7.0.15 cluster.c clusterCommand "failover"), run on a
 * replica. The default coordinates with the master over RESP (cluster/manual-failover.ts): its
 * writes paused, this replica caught up to its offset, then the takeover. FORCE and TAKEOVER take
 * over at once. Redis's FORCE still holds an election among the masters and TAKEOVER does not;
 * here neither asks anyone (no election code: docs/CLUSTER-FAILOVER.md), so they act alike.
 */
import type { CommandContext, ServerContext } from '../kernel/context.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import { ERR, ReplyError, subcommandSyntaxText } from '../kernel/reply-error.js'
import { ManualFailovers, MF_TIMEOUT_MS, type PeerCommands } from '../../cluster/manual-failover.js'
import { clusterPeerLink } from '../../cluster/peer-link.js'
import { takeOverMaster } from '../kernel/cluster-replicaof.js'

const failovers = new WeakMap<ServerContext, ManualFailovers>()

/** CLUSTER FAILOVER [FORCE|TAKEOVER] → +OK (the default failover then goes on in the background) */
export function clusterFailover(ctx: CommandContext, argv: CommandArgs): void {
  const { server, client } = ctx
  if (argv.length > 3) throw new ReplyError(subcommandSyntaxText(argv.get(0), argv.get(1)), 'latin1')
  let mode: 'default' | 'force' | 'takeover' = 'default'
  if (argv.length === 3) {
    if (argv.isKeyword(2, 'FORCE')) mode = 'force'
    else if (argv.isKeyword(2, 'TAKEOVER')) mode = 'takeover'
    else throw new ReplyError(ERR.SYNTAX)
  }
  const cluster = server.cluster!
  if (cluster.myself.isMaster) throw new ReplyError(ERR.FAILOVER_ON_MASTER)
  const master = cluster.myMaster()
  if (master === undefined) throw new ReplyError(ERR.FAILOVER_MASTER_UNKNOWN)
  // redis: the master FAIL-flagged or its bus link down; here the replication link is that link.
  if (mode === 'default' && (master.fail || server.replicaLink.state !== 'connected')) {
    throw new ReplyError(ERR.FAILOVER_MASTER_DOWN)
  }
  const failover = manualFailovers(server)
  failover.reset()
  if (mode === 'default') {
    server.log.warning('Manual failover user request accepted.')
    void failover.start({ id: master.id, host: server.replicaLink.masterHost, port: server.replicaLink.masterPort })
  } else {
    server.log.warning(
      mode === 'takeover' ? 'Taking over the master (user request).' : 'Forced failover user request accepted.',
    )
    takeOverMaster(server, `CLUSTER FAILOVER ${mode.toUpperCase()} from 'id=${client.id} addr=${client.addr}'`)
  }
  client.reply.simple('OK')
}

/** The server's manual failovers, made at its first CLUSTER FAILOVER. */
function manualFailovers(server: ServerContext): ManualFailovers {
  let failover = failovers.get(server)
  if (failover === undefined) {
    failover = new ManualFailovers({
      log: server.log,
      connect: async (host, port) => peerCommands(server, host, port),
      appliedOffset: () => server.replicaLink.appliedOffset,
      stillReplicaOf: (masterId) =>
        server.cluster?.myself.masterId === masterId && server.replication.role === 'replica',
      takeOver: (masterEpoch) => {
        const cluster = server.cluster!
        if (masterEpoch > cluster.currentEpoch) cluster.currentEpoch = masterEpoch
        takeOverMaster(server, 'manual failover')
      },
    })
    failovers.set(server, failover)
  }
  return failover
}

/** A connection to host:port that AUTHs as the replication link does (masteruser/masterauth). */
function peerCommands(server: ServerContext, host: string, port: number): PeerCommands {
  const link = clusterPeerLink(host, port, server.config)
  return {
    async command(args) {
      const reply = await link.request(args, MF_TIMEOUT_MS)
      if (typeof reply === 'object' && reply !== null) throw new Error(reply.error)
      return reply
    },
    close: () => link.close(),
  }
}
