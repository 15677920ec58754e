/**
 * Publish/subscribe's state (redis 7.0 pubsub.c): which clients listen to which channel, pattern
 * and shard channel, and the delivery of a PUBLISH to them. Names are binary: a Map key is the
 * name read as latin1 (one character per byte), the Buffer kept beside it is what replies carry.
 * The commands (SUBSCRIBE, PUBLISH, PUBSUB ...) are in pubsub.ts.
 */
import type { ReplySink } from '../../protocol/reply-sink.js'
import { globMatch } from '../kernel/glob.js'
import { keyHashSlot } from '../../core/key-slot.js'

/**
 * The three namespaces (redis pubsubtype: pubSubType, the patterns, pubSubShardType): each has
 * its subscribe, unsubscribe and message words.
 */
export type SubscriptionKind = 'channels' | 'patterns' | 'shardChannels'

/** A client as pub/sub keeps it (kernel/context.ts ClientSession): where messages go, what it listens to. */
export interface Subscriber {
  readonly reply: ReplySink
  subscriptions?: Subscriptions | undefined
}

/** One client's subscriptions (redis client.pubsub_channels, pubsub_patterns, pubsubshard_channels). */
export class Subscriptions {
  readonly channels = new Map<string, Buffer>()
  readonly patterns = new Map<string, Buffer>()
  readonly shardChannels = new Map<string, Buffer>()

  /**
   * What a subscribe or unsubscribe confirmation counts (redis clientSubscriptionsCount for
   * channels and patterns, clientShardSubscriptionsCount for shard channels).
   */
  countFor(kind: SubscriptionKind): number {
    return kind === 'shardChannels' ? this.shardChannels.size : this.channels.size + this.patterns.size
  }

  /** Every subscription (redis clientTotalPubSubSubscriptionCount): 0 ends the subscribed mode. */
  get total(): number {
    return this.channels.size + this.patterns.size + this.shardChannels.size
  }
}

/** How messages reach a subscriber: the server decides whether it still takes output and sends it. */
export interface PushTarget {
  /** Whether the client takes messages now (false once it is closing: QUIT). */
  receives(client: Subscriber): boolean
  /** Output was added to the client's replies: check its output limit, send it at the end of the turn. */
  pushed(client: Subscriber): void
}

/** A channel (or pattern) and its subscribers, in the order they subscribed (redis keeps a list). */
interface Topic {
  readonly name: Buffer
  readonly clients: Set<Subscriber>
}

/** The message kinds' first element, as bulk strings (redis shared.messagebulk and its kin). */
const MESSAGE = Buffer.from('$7\r\nmessage\r\n')
const PMESSAGE = Buffer.from('$8\r\npmessage\r\n')
const SMESSAGE = Buffer.from('$8\r\nsmessage\r\n')
const SUNSUBSCRIBE = Buffer.from('$12\r\nsunsubscribe\r\n')

/** Names up to this long are read into a key byte by byte (cheaper than a call into Buffer's C++). */
const SHORT_NAME_BYTES = 32

/** A name as a Map key: its bytes read as latin1, one character each. */
function nameKey(name: Uint8Array): string {
  if (name.length > SHORT_NAME_BYTES)
    return Buffer.from(name.buffer, name.byteOffset, name.byteLength).toString('latin1')
  let key = ''
  for (let i = 0; i < name.length; i++) key += String.fromCharCode(name[i]!)
  return key
}

/**
 * Every subscription on the server (redis server.pubsub_channels, pubsub_patterns,
 * pubsubshard_channels), kept in step with each client's {@link Subscriptions}, and PUBLISH's
 * delivery: a message is written to each subscriber's replies and handed to the {@link PushTarget}.
 */
export class PubSubHub {
  private readonly topics: Record<SubscriptionKind, Map<string, Topic>> = {
    channels: new Map(),
    patterns: new Map(),
    shardChannels: new Map(),
  }

  constructor(private readonly target: PushTarget) {}

  /** Subscribes the client (redis pubsubSubscribeChannel / pubsubSubscribePattern); false if it already was. */
  subscribe(client: Subscriber, kind: SubscriptionKind, name: Uint8Array): boolean {
    const subscriptions = (client.subscriptions ??= new Subscriptions())
    const key = nameKey(name)
    if (subscriptions[kind].has(key)) return false
    const copy = Buffer.from(name) // the argument is a view of the read buffer
    subscriptions[kind].set(key, copy)
    const topics = this.topics[kind]
    let topic = topics.get(key)
    if (topic === undefined) {
      topic = { name: copy, clients: new Set() }
      topics.set(key, topic)
    }
    topic.clients.add(client)
    return true
  }

  /**
   * Unsubscribes the client from one name; false if it was not subscribed. A channel nobody
   * listens to any more is forgotten (PUBSUB CHANNELS no longer lists it). The client leaves the
   * subscribed mode when this was its last subscription.
   */
  unsubscribe(client: Subscriber, kind: SubscriptionKind, name: Uint8Array): boolean {
    const subscriptions = client.subscriptions
    const key = nameKey(name)
    if (subscriptions === undefined || !subscriptions[kind].delete(key)) return false
    const topic = this.topics[kind].get(key)!
    topic.clients.delete(client)
    if (topic.clients.size === 0) this.topics[kind].delete(key)
    if (subscriptions.total === 0) client.subscriptions = undefined
    return true
  }

  /** Every subscription of the client, silently (RESET, a closed connection: redis freeClient). */
  unsubscribeAll(client: Subscriber): void {
    const subscriptions = client.subscriptions
    if (subscriptions === undefined) return
    for (const kind of ['channels', 'patterns', 'shardChannels'] as const) {
      for (const name of [...subscriptions[kind].values()]) this.unsubscribe(client, kind, name)
    }
    client.subscriptions = undefined
  }

  /**
   * Cluster mode, a slot no longer served here (redis removeChannelsInSlot): every client leaves
   * the shard channels of `slot`, each told by a `sunsubscribe` message, as an SUNSUBSCRIBE would
   * confirm it, so that it subscribes again at the slot's new owner.
   */
  unsubscribeSlot(slot: number): void {
    const topics = this.topics.shardChannels
    if (topics.size === 0) return
    for (const topic of [...topics.values()]) {
      if (keyHashSlot(topic.name) !== slot) continue
      for (const client of [...topic.clients]) {
        this.unsubscribe(client, 'shardChannels', topic.name)
        if (!this.target.receives(client)) continue
        const reply = client.reply
        reply.push(3)
        reply.raw(SUNSUBSCRIBE)
        reply.bulk(topic.name)
        reply.integer(client.subscriptions?.shardChannels.size ?? 0)
        this.target.pushed(client)
      }
    }
  }

  /**
   * redis pubsubPublishMessage: to the channel's subscribers in the order they subscribed, then
   * (not for a shard channel) to each pattern's that matches. Returns how many clients it was
   * sent to (a client listening by a channel and two patterns counts three times, as in redis).
   */
  publish(channel: Uint8Array, message: Uint8Array, shard: boolean): number {
    let receivers = 0
    const topic = this.topics[shard ? 'shardChannels' : 'channels'].get(nameKey(channel))
    if (topic !== undefined) receivers += this.deliver(topic, shard ? SMESSAGE : MESSAGE, undefined, channel, message)
    if (shard) return receivers
    for (const pattern of this.topics.patterns.values()) {
      if (globMatch(pattern.name, channel)) receivers += this.deliver(pattern, PMESSAGE, pattern.name, channel, message)
    }
    return receivers
  }

  /**
   * Writes the message to each of the topic's subscribers (redis addReplyPubsubMessage /
   * addReplyPubsubPatMessage: RESP2 `*3`/`*4`, RESP3 a push reply) straight into its replies.
   */
  private deliver(
    topic: Topic,
    kind: Uint8Array,
    pattern: Uint8Array | undefined,
    channel: Uint8Array,
    message: Uint8Array,
  ): number {
    let receivers = 0
    // A subscriber closed for its output limit leaves the set as it is closed.
    for (const client of topic.clients) {
      receivers++
      if (!this.target.receives(client)) continue
      const reply = client.reply
      reply.push(pattern === undefined ? 3 : 4)
      reply.raw(kind)
      if (pattern !== undefined) reply.bulk(pattern)
      reply.bulk(channel)
      reply.bulk(message)
      this.target.pushed(client)
    }
    return receivers
  }

  /** The names with subscribers (PUBSUB CHANNELS / SHARDCHANNELS), those matching `pattern` if given. */
  names(kind: SubscriptionKind, pattern?: Uint8Array): Buffer[] {
    const names: Buffer[] = []
    for (const topic of this.topics[kind].values()) {
      if (pattern === undefined || globMatch(pattern, topic.name)) names.push(topic.name)
    }
    return names
  }

  /** Subscribers to one channel, patterns left out (PUBSUB NUMSUB / SHARDNUMSUB). */
  subscribers(kind: SubscriptionKind, name: Uint8Array): number {
    return this.topics[kind].get(nameKey(name))?.clients.size ?? 0
  }

  /** Channels, patterns or shard channels with at least one subscriber (INFO stats, PUBSUB NUMPAT). */
  count(kind: SubscriptionKind): number {
    return this.topics[kind].size
  }
}
