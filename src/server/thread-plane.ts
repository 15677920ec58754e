/**
 * The main thread's side of the commands the I/O threads answer themselves (thread-answers.ts):
 * BF.EXISTS, BF.MEXISTS and BF.CARD of a connection whose thread holds the filter's layout, while
 * nothing the main thread would check for them is on, and BF.ADD, BF.MADD and BF.INSERT while besides nothing
 * would refuse a write (see {@link ThreadPlane.recheck} and {@link ThreadPlane.quiesce}).
 * Everything else still runs on the main thread (docs/THREADS.md, "How it works").
 *
 * What it keeps true, each before the reply that makes it visible leaves:
 * - **Every write recorded, in one order, before it is shown.** While the append-only log is on
 *   or a replica takes the stream, a thread writes a record of each add (its items that answered 1)
 *   to its journal before its adding word goes back to 0; the main thread takes the journals into
 *   the log and the stream as `BF.ADDED` records before any command of its own runs (and whenever
 *   a thread says it journaled), so they stand between the commands they were made between. A
 *   thread's reply leaves only once every write it may show (every add of any thread, every
 *   write command of the main thread counted when it was made) is durable under the fsync policy
 *   ({@link ThreadPlane.wrote}, thread-wire.ts PLANE_APPLIED), as redis sends no reply before its
 *   AOF write.
 * - **Which filter a key holds.** A thread learns a key's layout (its layers: where each bitmap
 *   lies in a shared WebAssembly memory, its size and hash count) from a message of this side,
 *   sent when a command of that thread's connection checked the key here. The layout names a cell,
 *   a word of shared memory, and the cell's version then. Any change to what the key holds (set,
 *   deleted, renamed, its expiry, SWAPDB: store/registry.ts) or to its layers (a layer added:
 *   core/scalable-filter.ts) bumps the version synchronously, and the thread checks the version
 *   before every answer: a stale layout is never used. In cluster mode a layout goes out only for
 *   a key of a slot served at once (owned, neither migrating nor importing, the cluster ok: no
 *   client could get a redirection or CLUSTERDOWN for it), and every layout is forgotten whenever
 *   those slots may change (cluster-state.ts servingChanged), before the change can show in a reply.
 * - **Whether the threads may answer at all** (one shared word): only on a server that is not
 *   loading (a replica: with replica-serve-stale-data yes, else its link's state would matter),
 *   with no MONITOR and no CLIENT PAUSE, so that no check
 *   dispatch makes could refuse or hold the command. Recomputed before every client's output is
 *   written: whatever closed it (a MONITOR, a pause) was a command whose reply comes after.
 * - **Which connections.** A thread answers a connection itself only after this side said the
 *   connection is settled: it ran everything read from it, holds nothing of it, it is a plain
 *   client (authenticated, no transaction, subscription, MONITOR, CLIENT REPLY, block or ASKING),
 *   and its user may run the threads' commands on any key (no ACL check could refuse them). Any
 *   command the thread does not answer itself ends that until the next such word, so a connection's
 *   commands run and answer in its order. An ACL change moves the settling generation on (shared
 *   word, before the change's reply): every connection's next command goes to this side, which
 *   settles it again under the new rules.
 * - **No memory freed under a reader.** A collected bitmap's region is reused only once every
 *   thread that might have been reading it finished that read (epochs: core/arena.ts ReleaseGate).
 *   A large filter's own memory goes only once no thread holds a view of it (they drop a layout as
 *   soon as its cell changes).
 */
import { gateReleases } from '../core/arena.js'
import { type BloomLayer, SHARED_FOREIGN_ADDS } from '../core/bloom-layer.js'
import type { ScalableBloomFilter } from '../core/scalable-filter.js'
import type { BloomEntry } from '../store/registry.js'
import { beforeCaptures, copiesAttached } from '../store/layer-copy.js'
import { MemoryGuard } from '../store/memory-guard.js'
import { slotOfName } from '../store/slot-index.js'
import { watchHealth } from '../commands/kernel/health-watch.js'
import { runsAnywhere } from '../commands/kernel/acl-check.js'
import type { ClientSession, CommandEntry, ServerContext, ThreadChecks } from '../commands/kernel/context.js'
import { CommandArgs } from '../protocol/command-args.js'
import { loggedArgs } from '../commands/state/slowlog.js'
import type { Client } from './client.js'
import { RemoteSocket } from './remote-socket.js'
import { RingReader, createRing } from './thread-ring.js'
import {
  COUNTER_ADDED,
  COUNTER_CALLS,
  COUNTER_COMMANDS,
  COUNTER_INPUT_BYTES,
  COUNTER_OUTPUT_BYTES,
  COUNTER_READS,
  COUNTER_REJECTED,
  COUNTER_STRIDE,
  COUNTER_WRITES,
  JOURNAL_ADD,
  JOURNAL_BYTES,
  MAIN_SLOT,
  PLANE_ADDS,
  PLANE_APPLIED,
  PLANE_CELL_COUNT,
  PLANE_CELLS,
  PLANE_CLIENTS,
  PLANE_COUNT_STRIDE,
  PLANE_COUNTS,
  PLANE_DURABLE,
  PLANE_EPOCH,
  PLANE_GENERATION,
  PLANE_LATENCY_MILLIS,
  PLANE_LOGGING,
  PLANE_MAXCLIENTS,
  PLANE_OPEN,
  PLANE_SLOWLOG_MICROS,
  PLANE_WORDS,
  THREAD_ADDING,
  THREAD_COMMANDS,
  handshakesUnderWay,
  THREAD_READING,
  THREAD_WAITING,
  threadWord,
} from './thread-wire.js'

/** A key's layout as a thread receives it. */
export interface PublishedLayout {
  readonly type: 'publish'
  /** `db\nname`, the name in latin1. */
  readonly key: string
  readonly cell: number
  readonly version: number
  /** The seed of a seeded filter, -1 for RedisBloom's hashing. */
  readonly seed: number
  readonly layers: readonly PublishedLayer[]
  /**
   * Whether the cell's counts (thread-wire.ts PLANE_COUNTS) are the newest layer's: then the
   * threads may add to it and answer BF.CARD.
   */
  readonly counts: boolean
  /** Items of the layers before the newest (they take no more while the layout is current). */
  readonly olderItems: number
}

export interface PublishedLayer {
  readonly memory: SharedArrayBuffer
  readonly offset: number
  readonly bitCount: number
  readonly hashCount: number
  readonly capacity: number
  readonly errorRate: number
  readonly bitsPerEntry: number
}

/**
 * Layouts a thread must drop: their cells changed. Pairs of a cell and its version after the
 * change: a layout sent later under the same cell (a version as new or newer) stays.
 */
export interface ForgottenLayouts {
  readonly type: 'forget'
  readonly cells: readonly number[]
}

export type PlaneMessage = PublishedLayout | ForgottenLayouts

/** To a thread that waits for it (thread-wire.ts THREAD_WAITING): more writes are durable. */
export interface PlaneNotice {
  readonly type: 'durable'
}

/** The name of the threads' adds' records in the log and the replicas' stream (commands/filters/bloom.ts bfAdded). */
const ADDED_RECORD = Buffer.from('BF.ADDED')

interface Cell {
  readonly index: number
  readonly key: string
  readonly entry: BloomEntry
  readonly filter: ScalableBloomFilter
  readonly grew: () => void
  /** The threads it was sent to. */
  readonly sentTo: Set<number>
  /** The layer whose counts the cell holds (the newest when the cell was made), if any. */
  readonly shared: BloomLayer | undefined
  /** The threads' adds to the layer when last counted in ({@link ThreadPlane.foldAdds}). */
  seenAdds: number
}

/** How often held regions are looked at again while a reader may be on them. */
const RELEASE_RETRY_MS = 5

export class ThreadPlane implements ThreadChecks {
  /** The words every thread shares (thread-wire.ts PLANE_*). */
  readonly control = new SharedArrayBuffer(PLANE_WORDS * 4)
  /** Each thread's counters (thread-wire.ts COUNTER_*). */
  readonly counterMemory: SharedArrayBuffer
  private readonly words: Int32Array
  private readonly counters: Float64Array
  /** The counters as last folded into the server's. */
  private readonly folded: Float64Array
  private readonly cells = new Map<string, Cell>()
  /**
   * The same cells by filter: a filter is under one key at a time (a move deletes and sets it), so
   * a check of a key whose layout its thread holds already is told without making the key's string.
   */
  private readonly cellOfFilter = new WeakMap<ScalableBloomFilter, Cell>()
  private readonly freeCells: number[] = []
  private nextCell = 0
  /** The settling generation (thread-wire.ts PLANE_GENERATION), and the ACL change it follows. */
  private generation = 0
  private aclVersion = -1
  /** By user name, whether the user may run the threads' commands anywhere (mayRunAnywhere), since the last ACL change. */
  private readonly answerable = new Map<string, boolean>()
  private open = false
  /** Whether the threads may add (PLANE_ADDS): from {@link recheck} to the next {@link quiesce}. */
  private addsOpen = false
  /** Items the threads' adds added, as last counted in (the sum of their COUNTER_ADDED). */
  private addedSeen = 0
  /** Cells holding a layer's counts. */
  private readonly sharing = new Set<Cell>()
  /** Off for good when a command the threads answer was renamed (rename-command), or from {@link shut}. */
  private usable: boolean
  private readonly entries: readonly (CommandEntry | undefined)[]
  private held: { stamp: number; release: () => void }[] = []
  /** Cells changed this turn, by the threads they were sent to (one message each at the turn's end). */
  private readonly forgotten = new Map<number, number[]>()
  private forgetScheduled = false
  private retry: NodeJS.Timeout | undefined
  /** Each thread's journal of its adds (thread-wire.ts JOURNAL_ADD), while writes are recorded. */
  readonly journals: SharedArrayBuffer[]
  private readonly journalReaders: RingReader[]
  /** Journal records taken from each thread, and the main thread's writes (thread-wire.ts PLANE_APPLIED). */
  private readonly taken: Int32Array
  /** Whether writes are recorded (thread-wire.ts PLANE_LOGGING). */
  private logging = false
  /** A {@link publishDurable} is under way, and whether more was taken since it began. */
  private publishing = false
  private publishAgain = false
  /**
   * Where the log stands past the threads' last record: while the log cannot be written, the
   * threads' replies wait for those records only, as the main thread's replies wait for their own
   * client's (store/durability-gate.ts).
   */
  private readonly journalWriter = { logOffset: 0 }
  /** The client of a thread's connection (io-threads.ts): whose WAIT and log offsets a record moves. */
  clientOf: ((thread: number, connection: number) => Client | undefined) | undefined = undefined

  constructor(
    private readonly server: ServerContext,
    private readonly threads: number,
    private readonly post: (thread: number, message: PlaneMessage | PlaneNotice) => void,
  ) {
    this.journals = Array.from({ length: threads }, () => createRing(JOURNAL_BYTES))
    this.journalReaders = this.journals.map((journal) => new RingReader(journal))
    this.taken = new Int32Array(threads + 1)
    this.words = new Int32Array(this.control)
    Atomics.store(this.words, PLANE_EPOCH, 1)
    this.counterMemory = new SharedArrayBuffer(threads * COUNTER_STRIDE * 8)
    this.counters = new Float64Array(this.counterMemory)
    this.folded = new Float64Array(this.counters.length)
    this.entries = THREAD_COMMANDS.map((name) => {
      const bytes = Buffer.from(name)
      const entry = server.commands.lookup(bytes, 0, bytes.length)
      // Under its own name only: rename-command may have given the name to another command.
      return entry?.spec.name.toLowerCase() === name && entry.lowerName === name ? entry : undefined
    })
    this.usable = this.entries.every((entry) => entry !== undefined)
    const shared = server.databases.shared
    shared.keyChanged = (db, name) => {
      if (this.cells.size === 0) return
      const cell = this.cells.get(`${db}\n${name}`)
      if (cell !== undefined) this.invalidate(cell)
    }
    shared.everyKeyChanged = () => this.forgetEveryKey()
    // A watched key's commands are the main thread's (its writes touch the watchers): its layout
    // is forgotten by the WATCH, and not sent while watched (looked).
    server.watchedKeys.keyWatched = shared.keyChanged
    // Cluster mode: a key's layout goes out only while its slot is served at once (looked), and
    // every layout is forgotten when those slots may have changed, before that can show in a reply.
    // The connections are settled again too: which are (READONLY ones on a replica) follows the role.
    if (server.cluster !== undefined)
      server.cluster.servingChanged = () => {
        this.forgetEveryKey()
        this.settleAgain()
      }
    gateReleases((release) => this.hold(release))
    beforeCaptures(() => this.quiesce())
    this.recheck()
  }

  /**
   * Opens or closes the threads' answers by what dispatch would check for their commands, and
   * passes on the SLOWLOG and latency thresholds. Called before any client's output is written.
   */
  recheck(): void {
    const server = this.server
    const open =
      this.usable &&
      // A replica answers checks as its master's stream left the filters (its DELs and expiries
      // change keys as any command does), unless it refuses them while its link is down.
      (server.replication.role === 'master' || server.config['replica-serve-stale-data']) &&
      !server.loading &&
      server.monitors.size === 0 &&
      server.pause.type === 'off'
    const words = this.words
    if (open !== this.open) {
      this.open = open
      Atomics.store(words, PLANE_OPEN, open ? 1 : 0)
    }
    // A user changed: what each settled connection may run is looked at again (settle).
    if (server.acl.version !== this.aclVersion) {
      this.aclVersion = server.acl.version
      this.answerable.clear()
      this.settleAgain()
    }
    const config = server.config
    // maxclients for the threads' TLS ports (CONFIG SET: a command, whose output comes after).
    if (words[PLANE_MAXCLIENTS] !== config.maxclients) Atomics.store(words, PLANE_MAXCLIENTS, config.maxclients)
    // Whether writes are recorded: then the threads journal their adds and hold their replies
    // until what they show is durable. Changed only while no thread adds.
    const logging = server.persistence.propagates
    if (logging !== this.logging) {
      this.quiesce()
      this.logging = logging
      Atomics.store(words, PLANE_LOGGING, logging ? 1 : 0)
    }
    // The adds: only where nothing refuses one (-OOM, -MISCONF, min-replicas, a replica's role)
    // and no capture reads a layer being written (a watched key's layout is not out: looked).
    const maxmemory = config.maxmemory
    const adds =
      open &&
      server.replication.role === 'master' &&
      !copiesAttached() &&
      !this.replicasShort() &&
      (maxmemory <= 0 || !MemoryGuard.of(server.databases).isOverLimit(maxmemory)) &&
      server.persistence.writeRefusal() === undefined
    if (adds && !this.addsOpen) {
      this.addsOpen = true
      Atomics.store(words, PLANE_ADDS, 1)
    } else if (!adds) this.quiesce()
    const slowlog = config['slowlog-log-slower-than']
    if (words[PLANE_SLOWLOG_MICROS] !== slowlog) Atomics.store(words, PLANE_SLOWLOG_MICROS, slowlog < 0 ? -1 : slowlog)
    const latency = config['latency-monitor-threshold']
    if (words[PLANE_LATENCY_MILLIS] !== latency) Atomics.store(words, PLANE_LATENCY_MILLIS, latency)
  }

  /**
   * Whether a write would be refused for want of replicas (dispatch.ts replicasRefusal): fewer
   * online replicas acknowledged within min-replicas-max-lag than min-replicas-to-write. Looked at
   * again on every tick too (server.ts cron), as an acknowledgement ages without any event.
   */
  private replicasShort(): boolean {
    const { config, masterSide } = this.server
    const needed = config['min-replicas-to-write']
    return needed > 0 && config['min-replicas-max-lag'] > 0 && masterSide.goodReplicaCount() < needed
  }

  looked(client: ClientSession, db: number, entry: BloomEntry): void {
    if (!this.open) return
    const socket = (client as Partial<Client>).socket
    if (!(socket instanceof RemoteSocket)) return
    const thread = socket.thread
    if (entry.expiresAt !== undefined || this.cellOfFilter.get(entry.filter)?.sentTo.has(thread) === true) return
    if (this.server.watchedKeys.watches(db, entry.name)) return
    // A key whose commands anyone may get a MOVED, ASK, TRYAGAIN or CLUSTERDOWN for stays here.
    // On a cluster replica only READONLY connections are settled (the others get MOVED), and only
    // for keys of its master's slots.
    const cluster = this.server.cluster
    if (cluster !== undefined) {
      const slot = slotOfName(entry.name)
      if (!cluster.servesAtOnce(slot) && !cluster.servesReadsAtOnce(slot)) return
    }
    const key = `${db}\n${entry.name}`
    let cell = this.cells.get(key)
    if (cell !== undefined && cell.filter !== entry.filter) {
      this.invalidate(cell)
      cell = undefined
    }
    if (cell === undefined) {
      const layers = layoutOf(entry.filter)
      if (layers === undefined) return
      const index = this.freeCells.pop() ?? (this.nextCell < PLANE_CELL_COUNT ? this.nextCell++ : undefined)
      if (index === undefined) return
      const filter = entry.filter
      const newest = filter.layers[filter.layers.length - 1]!
      const shared = newest.shareable ? newest : undefined
      shared?.share(this.words, PLANE_COUNTS + index * PLANE_COUNT_STRIDE)
      const made: Cell = {
        index,
        key,
        entry,
        filter,
        grew: () => this.invalidate(made),
        sentTo: new Set(),
        shared,
        seenAdds: 0,
      }
      cell = made
      filter.onGrow = made.grew
      this.cells.set(key, made)
      this.cellOfFilter.set(filter, made)
      if (shared !== undefined) this.sharing.add(made)
    }
    if (cell.sentTo.has(thread)) return
    const layers = layoutOf(cell.filter)
    if (layers === undefined) return
    cell.sentTo.add(thread)
    const filter = cell.filter
    let olderItems = 0
    for (let i = 0; i < filter.layers.length - 1; i++) olderItems += filter.layers[i]!.items
    this.post(thread, {
      type: 'publish',
      key,
      cell: cell.index,
      version: Atomics.load(this.words, PLANE_CELLS + cell.index),
      seed: filter.hashing.kind === 'seeded' ? filter.hashing.seed : -1,
      layers,
      counts: cell.shared !== undefined,
      olderItems,
    })
  }

  /**
   * No thread adds from here until the next {@link recheck} opens the adds again, and none is
   * under way when this returns (each thread's adding word is 0): what the threads added is
   * counted in (the dirty counter, the filters' versions). Every command runs after this
   * (commands/kernel/dispatch.ts), and every capture begins after it: the main thread never
   * writes or reads for a point while a thread adds.
   */
  quiesce(): void {
    if (this.addsOpen) this.closeAdds(true)
  }

  /** {@link quiesce}; `wait` false once the threads are gone (a thread stopped mid-add left its word raised). */
  private closeAdds(wait: boolean): void {
    this.addsOpen = false
    const words = this.words
    Atomics.store(words, PLANE_ADDS, 0)
    // A thread stores its adding word, then reads PLANE_ADDS (both sequentially consistent): it
    // either saw 0 and adds nothing, or its 1 is seen here. It notifies once it stored 0 again.
    for (let thread = 0; wait && thread < this.threads; thread++) {
      const adding = threadWord(thread, THREAD_ADDING)
      while (Atomics.load(words, adding) !== 0) Atomics.wait(words, adding, 1, 1)
    }
    // Every add made is journaled now (before its adding word went back to 0): its record goes
    // before whatever the main thread runs next.
    if (wait) this.takeJournals()
    this.foldAdds()
  }

  /** A thread journaled adds: their records go to the log and the stream now, in the order they were made. */
  journaled(): void {
    this.takeJournals()
  }

  /**
   * The main thread runs a write: a thread's reply that may show it waits until it is durable
   * (thread-wire.ts PLANE_APPLIED). Before the command runs, while writes are recorded.
   */
  wrote(): void {
    if (!this.logging) return
    const taken = this.taken
    taken[this.threads] = (taken[this.threads]! + 1) | 0
    Atomics.store(this.words, PLANE_APPLIED + MAIN_SLOT, taken[this.threads]!)
    this.scheduleDurable()
  }

  /**
   * The threads' journal records, each as `BF.ADDED key item...` (commands/filters/bloom.ts) in
   * the log and the replicas' stream. Taken between two commands of the main thread, so the
   * records keep the order the adds and those commands were made in: an add journaled before a
   * command ran was taken by that command's quiesce, one made after it is taken after it. The adds
   * of one interval between two commands all went into room claimed in newest layers that none of
   * them changed, so their order among themselves changes neither bits nor counts.
   */
  private takeJournals(): void {
    let any = false
    for (let thread = 0; thread < this.threads; thread++) {
      let count = 0
      this.journalReaders[thread]!.drain((type, connection, payload) => {
        count++
        if (type === JOURNAL_ADD) this.logAdd(thread, connection, payload)
      }, Infinity)
      if (count === 0) continue
      this.taken[thread] = (this.taken[thread]! + count) | 0
      any = true
    }
    if (any) this.scheduleDurable()
  }

  private logAdd(thread: number, connection: number, payload: Buffer): void {
    const db = payload.readUInt32LE(0)
    const keyEnd = 8 + payload.readUInt32LE(4)
    if (keyEnd === payload.length) return
    const record = new CommandArgs()
    record.push(ADDED_RECORD, 0, ADDED_RECORD.length)
    record.push(payload, 8, keyEnd)
    for (let at = keyEnd; at < payload.length;) {
      const end = at + 4 + payload.readUInt32LE(at)
      record.push(payload, at + 4, end)
      at = end
    }
    const server = this.server
    const client = this.clientOf?.(thread, connection)
    server.persistence.propagate(record, undefined, db, this.journalWriter)
    if (client === undefined) return
    client.logOffset = this.journalWriter.logOffset
    // What the client's WAIT waits for.
    client.replOffset = server.replication.masterReplOffset
  }

  private scheduleDurable(): void {
    if (this.publishing) {
      this.publishAgain = true
      return
    }
    this.publishing = true
    setImmediate(this.publishDurable)
  }

  /**
   * Once every record taken so far is durable (in the log under its fsync policy: the durability
   * gate, store/durability-gate.ts), the threads' replies that waited for them may leave: the
   * counts go to PLANE_DURABLE, and each thread that waits is told. One at a time; a later one
   * covers what was taken meanwhile.
   */
  private readonly publishDurable = (): void => {
    const counts = Int32Array.from(this.taken)
    void this.server.persistence.whenDurable(this.journalWriter.logOffset).then((durable) => {
      this.publishing = false
      if (!durable) return
      const words = this.words
      for (let thread = 0; thread < this.threads; thread++)
        Atomics.store(words, PLANE_DURABLE + thread, counts[thread]!)
      Atomics.store(words, PLANE_DURABLE + MAIN_SLOT, counts[this.threads]!)
      // After the counts: a thread stores its word, then looks at them (thread-answers.ts awaitDurable).
      for (let thread = 0; thread < this.threads; thread++) {
        const at = threadWord(thread, THREAD_WAITING)
        if (Atomics.load(words, at) === 1 && Atomics.compareExchange(words, at, 1, 0) === 1)
          this.post(thread, { type: 'durable' })
      }
      if (this.publishAgain) {
        this.publishAgain = false
        this.scheduleDurable()
      }
    })
  }

  /**
   * What the threads added since last counted in: the dirty counter, and each filter they added to
   * gets a new version (a snapshot writes its file again, WATCH sees it) and its health checked.
   */
  private foldAdds(): void {
    const counters = this.counters
    let added = 0
    for (let thread = 0; thread < this.threads; thread++) added += counters[thread * COUNTER_STRIDE + COUNTER_ADDED]!
    if (added === this.addedSeen) return
    this.server.databases.shared.dirty += added - this.addedSeen
    this.addedSeen = added
    for (const cell of this.sharing) this.foldCell(cell)
  }

  private foldCell(cell: Cell): void {
    const adds = Atomics.load(this.words, PLANE_COUNTS + cell.index * PLANE_COUNT_STRIDE + SHARED_FOREIGN_ADDS)
    if (adds === cell.seenAdds) return
    cell.seenAdds = adds
    cell.entry.version++
    watchHealth(this.server.log, cell.entry)
  }

  /** Every connection's next command goes to this side, which settles it again (thread-wire.ts PLANE_GENERATION). */
  private settleAgain(): void {
    Atomics.store(this.words, PLANE_GENERATION, ++this.generation)
  }

  private forgetEveryKey(): void {
    for (const cell of [...this.cells.values()]) this.invalidate(cell)
  }

  /** A key's layout changed: the threads' copies stop answering before this returns. */
  private invalidate(cell: Cell): void {
    if (cell.shared !== undefined) {
      // Not while a thread may still add to it (a no-op inside a command: dispatch stopped them).
      this.quiesce()
      this.foldCell(cell)
      cell.shared.unshare()
      this.sharing.delete(cell)
    }
    const version = Atomics.add(this.words, PLANE_CELLS + cell.index, 1) + 1
    if (cell.filter.onGrow === cell.grew) cell.filter.onGrow = undefined
    this.cells.delete(cell.key)
    if (this.cellOfFilter.get(cell.filter) === cell) this.cellOfFilter.delete(cell.filter)
    this.freeCells.push(cell.index)
    // The version already stops the threads; the message only lets them drop their views, so one
    // per thread at the end of the turn (a FLUSHALL of many keys sends one, not one per key).
    for (const thread of cell.sentTo) {
      let cells = this.forgotten.get(thread)
      if (cells === undefined) this.forgotten.set(thread, (cells = []))
      cells.push(cell.index, version)
    }
    if (cell.sentTo.size > 0 && !this.forgetScheduled) {
      this.forgetScheduled = true
      setImmediate(this.sendForgotten)
    }
  }

  private readonly sendForgotten = (): void => {
    this.forgetScheduled = false
    for (const [thread, cells] of this.forgotten) this.post(thread, { type: 'forget', cells })
    this.forgotten.clear()
  }

  /** A connection's output was written: its thread may answer it from now on, if it is a plain client. */
  settle(client: Client): void {
    const socket = client.socket
    if (!(socket instanceof RemoteSocket)) return
    if (
      client.state !== 'open' ||
      !client.authenticated ||
      client.transaction !== undefined ||
      client.subscriptions !== undefined ||
      client.monitoring ||
      client.replyMode !== undefined ||
      client.kind !== 'normal' ||
      client.blocked ||
      // ASKING lasts until the next command, which the main thread runs (cluster-routing.ts).
      (client as ClientSession).asking === true ||
      // A cluster replica redirects every key command of a connection without READONLY.
      (this.server.cluster !== undefined &&
        !this.server.cluster.myself.isMaster &&
        (client as ClientSession).clusterReadonly !== true) ||
      !client.betweenCommands() ||
      !this.mayRunAnywhere(client.user)
    )
      return
    socket.settle(client.db, this.generation)
  }

  /**
   * Whether the user may run every command the threads answer, on any key and with any
   * arguments: then no ACL check could refuse a command its thread answers (the threads check
   * nothing). By the user's root selector only, as it is after the last ACL change.
   */
  private mayRunAnywhere(name: string): boolean {
    const acl = this.server.acl
    if (acl.unrestricted) return true
    let may = this.answerable.get(name)
    if (may === undefined) {
      const user = acl.get(name)
      may = user !== undefined && runsAnywhere(user, this.entries)
      this.answerable.set(name, may)
    }
    return may
  }

  /** Its thread answered commands of the client: it is not idle (`timeout`, CLIENT LIST). */
  touched(client: Client, command: number): void {
    client.lastInteractionMs = Date.now()
    client.lastCommand = THREAD_COMMANDS[command] ?? client.lastCommand
  }

  /** A read its thread answered took at least a threshold: the SLOWLOG and the latency monitor take it. */
  slow(client: Client, record: Buffer): void {
    const micros = record.readDoubleLE(0)
    const count = record.readUInt32LE(8)
    const argc = record.readUInt32LE(12)
    const server = this.server
    const args = new CommandArgs()
    let at = 16
    while (at + 4 <= record.length) {
      const length = record.readUInt32LE(at)
      args.push(record, at + 4, at + 4 + length)
      at += 4 + length
    }
    const name = args.length > 0 ? args.latin1(0).toLowerCase() : ''
    const entry = this.entries.find((candidate) => candidate?.lowerName === name)
    if (entry === undefined) return
    const latency = server.config['latency-monitor-threshold']
    if (latency > 0 && micros >= latency * 1000) {
      // As redis's call() for one command: a fast one is a fast-command event. A read of several
      // is a command event (the record names only its first; the adds are not fast).
      const event = count === 1 && entry.spec.flags.includes('fast') ? 'fast-command' : 'command'
      server.latency.add(event, Math.floor(micros / 1000))
    }
    const threshold = server.config['slowlog-log-slower-than']
    if (threshold < 0 || micros < threshold) return
    const first = loggedArgs(entry, args, argc)
    const argv = count === 1 ? first : [...first, Buffer.from(`... (${count - 1} more commands in the same read)`)]
    server.slowlog.add(client, argv, Math.floor(micros), server.config['slowlog-max-len'])
  }

  fold(): void {
    this.foldAdds()
    const counters = this.counters
    const folded = this.folded
    const stats = this.server.stats
    for (let thread = 0; thread < this.threads; thread++) {
      const base = thread * COUNTER_STRIDE
      const delta = (index: number): number => {
        const now = counters[base + index]!
        const moved = now - folded[base + index]!
        folded[base + index] = now
        return moved
      }
      const commands = delta(COUNTER_COMMANDS)
      stats.commandsProcessed += commands
      stats.threadedCommandsProcessed += commands
      const reads = delta(COUNTER_READS)
      stats.readsProcessed += reads
      stats.threadedReadsProcessed += reads
      const writes = delta(COUNTER_WRITES)
      stats.writesProcessed += writes
      stats.threadedWritesProcessed += writes
      stats.netInputBytes += delta(COUNTER_INPUT_BYTES)
      stats.netOutputBytes += delta(COUNTER_OUTPUT_BYTES)
      stats.rejectedConnections += delta(COUNTER_REJECTED)
      for (let i = 0; i < THREAD_COMMANDS.length; i++) {
        const calls = delta(COUNTER_CALLS + 2 * i)
        const micros = delta(COUNTER_CALLS + 2 * i + 1)
        const counts = this.entries[i]?.row.counts
        if (counts === undefined) continue
        counts.calls += calls
        counts.micros += micros
      }
    }
  }

  /**
   * A collected bitmap's region: given back once every thread reading when it was collected
   * finished that read. A thread stores the epoch it read before it looks at any cell, and 0 when
   * done; a region collected at `stamp` is safe once no thread shows an epoch below it.
   */
  private hold(release: () => void): void {
    const stamp = Atomics.add(this.words, PLANE_EPOCH, 1) + 1
    if (this.passed(stamp)) return release()
    this.held.push({ stamp, release })
    this.retry ??= setTimeout(() => this.releaseHeld(), RELEASE_RETRY_MS)
  }

  private passed(stamp: number): boolean {
    for (let thread = 0; thread < this.threads; thread++) {
      const reading = Atomics.load(this.words, threadWord(thread, THREAD_READING))
      if (reading !== 0 && reading < stamp) return false
    }
    return true
  }

  private releaseHeld(): void {
    this.retry = undefined
    const waiting: typeof this.held = []
    for (const region of this.held) {
      if (this.passed(region.stamp)) region.release()
      else waiting.push(region)
    }
    this.held = waiting
    if (waiting.length > 0) this.retry = setTimeout(() => this.releaseHeld(), RELEASE_RETRY_MS)
  }

  /**
   * The server closes: the threads answer nothing more themselves from here (what they read goes
   * to the main thread, which runs no more input), and what they added is counted in before the
   * final save looks at the dirty counter.
   */
  shut(): void {
    this.usable = false
    this.open = false
    Atomics.store(this.words, PLANE_OPEN, 0)
    this.quiesce()
  }

  /** Connections in their TLS handshake on the threads (INFO bfs_tls_handshakes). */
  handshakes(): number {
    return handshakesUnderWay(this.words, this.threads)
  }

  /** The server's clients changed: what the threads' TLS ports admit handshakes by (thread-answers.ts). */
  clientsChanged(count: number): void {
    Atomics.store(this.words, PLANE_CLIENTS, count)
  }

  /** The threads are gone: what they held is released, the keyspace and arenas forget the plane. */
  stop(): void {
    this.closeAdds(false)
    Atomics.store(this.words, PLANE_OPEN, 0)
    beforeCaptures(undefined)
    for (const cell of this.sharing) cell.shared!.unshare()
    this.sharing.clear()
    clearTimeout(this.retry)
    this.retry = undefined
    for (const region of this.held) region.release()
    this.held = []
    gateReleases(undefined)
    const shared = this.server.databases.shared
    shared.keyChanged = undefined
    shared.everyKeyChanged = undefined
    this.server.watchedKeys.keyWatched = undefined
    if (this.server.cluster !== undefined) this.server.cluster.servingChanged = undefined
    for (const cell of this.cells.values()) if (cell.filter.onGrow === cell.grew) cell.filter.onGrow = undefined
    this.cells.clear()
  }
}

/**
 * The layers of a filter as a thread can read them: each bitmap whole in one shared arena
 * memory. Undefined for a filter with a layer outside the arenas (a plain array, or one in pieces).
 */
function layoutOf(filter: ScalableBloomFilter): PublishedLayer[] | undefined {
  const layers: PublishedLayer[] = []
  for (const layer of filter.layers) {
    const arena = layer.arena
    if (arena === undefined || layer.pieces !== undefined) return undefined
    const memory = arena.bytes.buffer
    if (!(memory instanceof SharedArrayBuffer)) return undefined
    layers.push({
      memory,
      offset: layer.bitmapOffset,
      bitCount: layer.bitCount,
      hashCount: layer.hashCount,
      capacity: layer.capacity,
      errorRate: layer.errorRate,
      bitsPerEntry: layer.bitsPerEntry,
    })
  }
  return layers
}
