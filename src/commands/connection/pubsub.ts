/**
 * Publish/subscribe commands as redis 7.0.15 answers them (pubsub.c): SUBSCRIBE, UNSUBSCRIBE,
 * PSUBSCRIBE, PUNSUBSCRIBE, SSUBSCRIBE, SUNSUBSCRIBE, PUBLISH, SPUBLISH and PUBSUB's subcommands.
 * The state is in state/pubsub-hub.ts; the subscribed mode's refusal (server.c processCommand) is
 * dispatch's (kernel/dispatch.ts).
 */
import type { ClientSession, CommandContext } from '../kernel/context.js'
import type { SubscriptionKind } from '../state/pubsub-hub.js'
import type { CommandArgs } from '../../protocol/command-args.js'
import { REPLICAS_ONLY } from '../../store/persistence.js'
import { ERR, ReplyError, subcommandSyntaxText } from '../kernel/reply-error.js'

/** The confirmation words of each namespace (redis shared.subscribebulk, ...). */
const WORDS: Record<SubscriptionKind, { subscribe: string; unsubscribe: string }> = {
  channels: { subscribe: 'subscribe', unsubscribe: 'unsubscribe' },
  patterns: { subscribe: 'psubscribe', unsubscribe: 'punsubscribe' },
  shardChannels: { subscribe: 'ssubscribe', unsubscribe: 'sunsubscribe' },
}

/** A subscribe or unsubscribe confirmation (redis addReplyPubsubSubscribed and its kin); a null name when there was none. */
function confirm(client: ClientSession, word: string, name: Uint8Array | undefined, kind: SubscriptionKind): void {
  const reply = client.reply
  reply.push(3)
  reply.bulk(word)
  if (name === undefined) reply.nullBulk()
  else reply.bulk(name)
  reply.integer(client.subscriptions?.countFor(kind) ?? 0)
}

function subscribeAll(ctx: CommandContext, argv: CommandArgs, kind: SubscriptionKind): void {
  const hub = ctx.server.pubsub
  for (let i = 1; i < argv.length; i++) {
    const name = argv.get(i)
    hub.subscribe(ctx.client, kind, name)
    confirm(ctx.client, WORDS[kind].subscribe, name, kind)
  }
}

/** redis unsubscribeCommand and its kin: the names given, or every one of the kind; one confirmation each, a null one for none. */
function unsubscribeAll(ctx: CommandContext, argv: CommandArgs, kind: SubscriptionKind): void {
  const { client, server } = ctx
  const word = WORDS[kind].unsubscribe
  if (argv.length > 1) {
    for (let i = 1; i < argv.length; i++) {
      const name = argv.get(i)
      server.pubsub.unsubscribe(client, kind, name)
      confirm(client, word, name, kind)
    }
    return
  }
  const names = [...(client.subscriptions?.[kind].values() ?? [])]
  for (const name of names) {
    server.pubsub.unsubscribe(client, kind, name)
    confirm(client, word, name, kind)
  }
  if (names.length === 0) confirm(client, word, undefined, kind)
}

/** SUBSCRIBE channel [channel ...] → one confirmation per channel; the connection is then subscribed */
export function subscribe(ctx: CommandContext, argv: CommandArgs): void {
  subscribeAll(ctx, argv, 'channels')
}

/** PSUBSCRIBE pattern [pattern ...] → one confirmation per pattern */
export function psubscribe(ctx: CommandContext, argv: CommandArgs): void {
  subscribeAll(ctx, argv, 'patterns')
}

/** SSUBSCRIBE shardchannel [shardchannel ...] → one confirmation per shard channel; refused inside MULTI */
export function ssubscribe(ctx: CommandContext, argv: CommandArgs): void {
  // redis ssubscribeCommand: refused to a CLIENT_DENY_BLOCKING client, which a transaction's is
  // (SUBSCRIBE and PSUBSCRIBE make an exception for MULTI, "for backward compatibility").
  if (ctx.client.transaction !== undefined) throw new ReplyError(ERR.SSUBSCRIBE_DENY_BLOCKING)
  subscribeAll(ctx, argv, 'shardChannels')
}

/** UNSUBSCRIBE [channel ...] */
export function unsubscribe(ctx: CommandContext, argv: CommandArgs): void {
  unsubscribeAll(ctx, argv, 'channels')
}

/** PUNSUBSCRIBE [pattern ...] */
export function punsubscribe(ctx: CommandContext, argv: CommandArgs): void {
  unsubscribeAll(ctx, argv, 'patterns')
}

/** SUNSUBSCRIBE [shardchannel ...] */
export function sunsubscribe(ctx: CommandContext, argv: CommandArgs): void {
  unsubscribeAll(ctx, argv, 'shardChannels')
}

/**
 * PUBLISH channel message → the number of clients it was sent to. Propagated to replicas only
 * (redis forceCommandPropagation PROPAGATE_REPL), never to the append-only log: a replica runs
 * it through this same handler, for its own subscribers.
 */
export function publish(ctx: CommandContext, argv: CommandArgs): void {
  const receivers = ctx.server.pubsub.publish(argv.get(1), argv.get(2), false)
  ctx.server.propagate(argv, REPLICAS_ONLY)
  ctx.client.reply.integer(receivers)
}

/** SPUBLISH shardchannel message → the number of clients it was sent to (no patterns) */
export function spublish(ctx: CommandContext, argv: CommandArgs): void {
  const receivers = ctx.server.pubsub.publish(argv.get(1), argv.get(2), true)
  ctx.server.propagate(argv, REPLICAS_ONLY)
  ctx.client.reply.integer(receivers)
}

function channelList(ctx: CommandContext, argv: CommandArgs, kind: SubscriptionKind): void {
  // redis registers CHANNELS with arity -2 and refuses more than one pattern in its handler.
  if (argv.length > 3) throw new ReplyError(subcommandSyntaxText(argv.get(0), argv.get(1)), 'latin1')
  const names = ctx.server.pubsub.names(kind, argv.length === 3 ? argv.get(2) : undefined)
  const reply = ctx.client.reply
  reply.array(names.length)
  for (const name of names) reply.bulk(name)
}

function subscriberCounts(ctx: CommandContext, argv: CommandArgs, kind: SubscriptionKind): void {
  const reply = ctx.client.reply
  reply.array((argv.length - 2) * 2)
  for (let i = 2; i < argv.length; i++) {
    const name = argv.get(i)
    reply.bulk(name)
    reply.integer(ctx.server.pubsub.subscribers(kind, name))
  }
}

/** PUBSUB CHANNELS [pattern] → the channels with subscribers (matching the pattern) */
export function pubsubChannels(ctx: CommandContext, argv: CommandArgs): void {
  channelList(ctx, argv, 'channels')
}

/** PUBSUB SHARDCHANNELS [pattern] → the shard channels with subscribers */
export function pubsubShardchannels(ctx: CommandContext, argv: CommandArgs): void {
  channelList(ctx, argv, 'shardChannels')
}

/** PUBSUB NUMSUB [channel ...] → channel, subscriber count, ... in the order asked (patterns not counted) */
export function pubsubNumsub(ctx: CommandContext, argv: CommandArgs): void {
  subscriberCounts(ctx, argv, 'channels')
}

/** PUBSUB SHARDNUMSUB [shardchannel ...] → shard channel, subscriber count, ... */
export function pubsubShardnumsub(ctx: CommandContext, argv: CommandArgs): void {
  subscriberCounts(ctx, argv, 'shardChannels')
}

/** PUBSUB NUMPAT → the number of patterns with subscribers */
export function pubsubNumpat(ctx: CommandContext): void {
  ctx.client.reply.integer(ctx.server.pubsub.count('patterns'))
}
