/**
 * A client as CLIENT LIST, CLIENT INFO and ACL LOG describe it (redis 7.0 networking.c
 * catClientInfoString), and its class for the output limits and CLIENT LIST TYPE (getClientType).
 */
import type { CommandContext, ClientSession } from './context.js'
import { userField } from '../state/acl/acl-users.js'

/** redis getClientInfoString's flags: x in a transaction, d once a watched key was written, else N. */
/** redis 7.0 networking.c catClientInfoString's flags, for the ones bfs clients can have. */
function clientFlags(client: ClientSession): string {
  const flags =
    (client.kind === 'replica' ? 'S' : client.monitoring === true ? 'O' : '') +
    (client.kind === 'master' ? 'M' : '') +
    (client.subscriptionCount() > 0 ? 'P' : '') +
    (client.transaction !== undefined ? 'x' : '') +
    (client.blocked === true ? 'b' : '') +
    (client.watch?.touched === true ? 'd' : '') +
    (client.unixSocket === true ? 'U' : '') +
    (client.noEvict === true ? 'e' : '')
  return flags === '' ? 'N' : flags
}

export type ClientType = 'normal' | 'replica' | 'pubsub' | 'master'

/** redis networking.c getClientType: master, then replica, then pubsub, else normal. */
export function clientType(client: ClientSession): ClientType {
  if (client.kind !== 'normal') return client.kind
  return client.subscriptionCount() > 0 ? 'pubsub' : 'normal'
}

/** One CLIENT LIST line, with redis 7.0's fields. */
export function clientInfoLine(ctx: CommandContext, client: ClientSession): string {
  const now = Date.now()
  const fields = [
    `id=${client.id}`,
    `addr=${client.addr}`,
    `laddr=${client.laddr}`,
    'fd=0',
    `name=${client.name}`,
    `age=${Math.floor((now - client.createdAtMs) / 1000)}`,
    `idle=${Math.floor((now - client.lastInteractionMs) / 1000)}`,
    `flags=${clientFlags(client)}`,
    `db=${client.db}`,
    `sub=${client.subscriptions?.channels.size ?? 0}`,
    `psub=${client.subscriptions?.patterns.size ?? 0}`,
    `ssub=${client.subscriptions?.shardChannels.size ?? 0}`,
    `multi=${client.transaction?.queued.length ?? -1}`,
    `qbuf=${client.queryBufferBytes()}`,
    'qbuf-free=0',
    'argv-mem=0',
    'multi-mem=0',
    'rbs=0',
    'rbp=0',
    'obl=0',
    'oll=0',
    `omem=${client.outputBytes()}`,
    'tot-mem=0',
    'events=r',
    `cmd=${client.lastCommand}`,
    `user=${userField(client)}`,
    'redir=-1',
    `resp=${client.reply.protocol}`,
    `lib-name=${client.libName}`,
    `lib-ver=${client.libVersion}`,
  ]
  void ctx
  return fields.join(' ')
}
