/**
 * Publish/subscribe's state (redis 7.0 pubsub.c): which clients listen to which channel, pattern
 * and shard channel, and the delivery of a PUBLISH to them. Names are binary: a Map key is the
 * name read as latin1 (one character per byte), the Buffer kept beside it is what replies carry.
 * The commands (SUBSCRIBE, PUBLISH, PUBSUB ...) are in pubsub.ts.
 */
import type { ClientSession } from './context.js'
import { globMatch } from './glob.js'

/**
 * The three namespaces (redis pubsubtype: pubSubType, the patterns, pubSubShardType): each has
 * its subscribe, unsubscribe and message words.
 */
export type SubscriptionKind = 'channels' | 'patterns' | 'shardChannels'

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
  receives(client: ClientSession): boolean
  /** Output was added to the client's replies: check its output limit, send it at the end of the turn. */
  pushed(client: ClientSession): void
}

/** A channel (or pattern) and its subscribers, in the order they subscribed (redis keeps a list). */
interface Topic {
  readonly name: Buffer
  readonly clients: Set<ClientSession>
}

const MESSAGE = Buffer.from('message')
const PMESSAGE = Buffer.from('pmessage')
const SMESSAGE = Buffer.from('smessage')
const CRLF = Buffer.from('\r\n')

/** One message's bytes, encoded once for every subscriber: RESP2 `*n`, RESP3 `>n` (made on first need). */
class Frame {
  private resp2: Buffer | undefined
  private resp3: Buffer | undefined

  constructor(private readonly parts: readonly Uint8Array[]) {}

  bytes(protocol: 2 | 3): Buffer {
    if (this.resp2 === undefined) {
      const chunks: Uint8Array[] = [Buffer.from(`*${this.parts.length}\r\n`)]
      for (const part of this.parts) chunks.push(Buffer.from(`$${part.length}\r\n`), part, CRLF)
      this.resp2 = Buffer.concat(chunks)
    }
    if (protocol === 2) return this.resp2
    if (this.resp3 === undefined) {
      this.resp3 = Buffer.from(this.resp2)
      this.resp3[0] = 0x3e // >
    }
    return this.resp3
  }
}

function nameKey(name: Uint8Array): string {
  return Buffer.from(name.buffer, name.byteOffset, name.byteLength).toString('latin1')
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
  subscribe(client: ClientSession, kind: SubscriptionKind, name: Uint8Array): boolean {
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
  unsubscribe(client: ClientSession, kind: SubscriptionKind, name: Uint8Array): boolean {
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
  unsubscribeAll(client: ClientSession): void {
    const subscriptions = client.subscriptions
    if (subscriptions === undefined) return
    for (const kind of ['channels', 'patterns', 'shardChannels'] as const) {
      for (const name of [...subscriptions[kind].values()]) this.unsubscribe(client, kind, name)
    }
    client.subscriptions = undefined
  }

  /**
   * redis pubsubPublishMessage: to the channel's subscribers in the order they subscribed, then
   * (not for a shard channel) to each pattern's that matches. Returns how many clients it was
   * sent to (a client listening by a channel and two patterns counts three times, as in redis).
   */
  publish(channel: Uint8Array, message: Uint8Array, shard: boolean): number {
    let receivers = 0
    const topic = this.topics[shard ? 'shardChannels' : 'channels'].get(nameKey(channel))
    if (topic !== undefined) {
      receivers += this.deliver(topic, new Frame([shard ? SMESSAGE : MESSAGE, topic.name, message]))
    }
    if (shard) return receivers
    for (const pattern of this.topics.patterns.values()) {
      if (!globMatch(pattern.name, channel)) continue
      receivers += this.deliver(pattern, new Frame([PMESSAGE, pattern.name, channel, message]))
    }
    return receivers
  }

  private deliver(topic: Topic, frame: Frame): number {
    let receivers = 0
    // A subscriber closed for its output limit leaves the set later (its socket's close event).
    for (const client of topic.clients) {
      receivers++
      if (!this.target.receives(client)) continue
      client.reply.raw(frame.bytes(client.reply.protocol))
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
