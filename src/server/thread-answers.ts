/**
 * An I/O thread's own answers to BF.EXISTS, BF.MEXISTS, BF.CARD, BF.ADD, BF.MADD and BF.INSERT (thread-plane.ts
 * says when it may give them): the layouts of the keys the main thread sent it, checked against
 * their cells before every answer, and the bits read in place in the shared WebAssembly memories
 * with the same probe loop as the main thread (core/bloom-layer.ts), so every answer is the one the
 * main thread would give. Adds claim room in the newest layer's shared counts, then set their bits
 * with atomic ORs (core/bloom-layer.ts orHashed), only while the main thread lets them
 * (thread-wire.ts PLANE_ADDS) and with this thread's adding word raised.
 *
 * A command is answered here only when it is whole in what was read, plainly framed
 * (`*N\r\n` then `$len\r\n` items), small, and names a key whose layout is current; anything else
 * goes to the main thread as it came, and with it everything after it, in order.
 */
import { performance } from 'node:perf_hooks'
import { BloomLayer, SHARED_FOREIGN_ADDS, SHARED_ITEMS, SHARED_RESERVED, SHARED_SET_BITS } from '../core/bloom-layer.js'
import { createHashPair, hashRedisBloom, hashSeeded } from '../core/hashing.js'
import type { PlaneMessage, PublishedLayout } from './thread-plane.js'
import { RingWriter } from './thread-ring.js'
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
  COUNTERS_PER_THREAD,
  FIRST_THREAD_WRITE,
  handshakesUnderWay,
  JOURNAL_ADD,
  MAIN_SLOT,
  PLANE_ADDS,
  PLANE_APPLIED,
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
  THREAD_ADDING,
  THREAD_COMMANDS,
  THREAD_HANDSHAKING,
  THREAD_READING,
  THREAD_WAITING,
  threadWord,
} from './thread-wire.js'

/** The shared memories an I/O thread is given (io-threads.ts). */
export interface PlaneMemory {
  readonly control: SharedArrayBuffer
  readonly counters: SharedArrayBuffer
  /** This thread's journal (thread-wire.ts JOURNAL_ADD records), read by the main thread. */
  readonly journal: SharedArrayBuffer
  /** How many I/O threads there are. */
  readonly threads: number
}

/** The most arguments of a command answered here (more: the main thread answers it). */
const MAX_ARGS = 258
/**
 * The longest command answered here, in bytes; a longer one is left to the main thread. Small
 * enough for a SLOW record of the whole command to be one record of a ring (thread-ring.ts).
 */
export const MAX_COMMAND_BYTES = 16 * 1024

const INCOMPLETE = 0
const NOT_PLAIN = -1

const ONE = Buffer.from(':1\r\n')
const ZERO = Buffer.from(':0\r\n')

/** A key's layout, as this thread can check it. */
interface Layout {
  readonly cell: number
  readonly version: number
  readonly seed: number
  /** Oldest first. */
  readonly layers: readonly BloomLayer[]
  /** Where the newest layer's counts are in the control words (core/bloom-layer.ts SHARED_*), or -1: no adds here. */
  readonly countsAt: number
  /** Items of the layers before the newest. */
  readonly olderItems: number
}

/** Command indexes of {@link THREAD_COMMANDS} (4 is BF.MADD). */
const EXISTS = 0
const MEXISTS = 1
const CARD = 2
const ADD = 3
const INSERT = 5

/** A read's answers and what they count. */
export interface Answered {
  /** Bytes of the read answered here: the rest goes to the main thread. */
  readonly used: number
  /** Commands answered. */
  readonly commands: number
  /** The reply bytes, or undefined for none. */
  readonly reply: Buffer | undefined
  /** The last command answered (thread-wire.ts THREAD_COMMANDS index). */
  readonly last: number
  /** µs the answers took, with the first command's arguments, when over a threshold; else undefined. */
  readonly slow: Buffer | undefined
  /**
   * While writes are recorded: the applied counts the reply may show (thread-wire.ts
   * PLANE_APPLIED, the threads' then the main thread's) when some of them are not durable yet: the
   * reply waits until they are ({@link ThreadAnswers.durable}). Undefined: it may leave now.
   */
  readonly need: Int32Array | undefined
  /** Whether the read's adds wrote journal records (the main thread is told). */
  readonly journaled: boolean
}

export class ThreadAnswers {
  private readonly words: Int32Array
  private readonly counters: Float64Array
  private readonly layouts = new Map<string, Layout>()
  private readonly keyOfCell = new Map<number, string>()
  private readonly starts = new Uint32Array(MAX_ARGS)
  private readonly ends = new Uint32Array(MAX_ARGS)
  private argc = 0
  private replies: Buffer[] = []
  private replyBytes = 0
  private readonly found = new Uint8Array(MAX_ARGS)
  /** The hash pairs of a command's items, one view of four words each. */
  private readonly pairs: Uint32Array[] = Array.from({ length: MAX_ARGS }, () => createHashPair())
  private readonly addingWord: number
  /** Whether this read stored its adding word (thread-plane.ts quiesce). */
  private adding = false
  /** The counts of adds made since {@link publishCounts}: their cell's words, -1 for none. */
  private pendingAt = -1
  private pendingItems = 0
  private pendingBits = 0
  /** A read's answered commands of each kind (thread-wire.ts THREAD_COMMANDS). */
  private readonly calls = new Float64Array(THREAD_COMMANDS.length)
  private readonly readerWord: number
  /** The last key looked up (a copy), its database and layout: a run of checks of one key makes no string. */
  private lastKey = Buffer.alloc(0)
  private lastDb = -1
  private lastLayout: Layout | undefined = undefined
  private readonly journal: RingWriter
  /** A journal record being made. */
  private readonly record = Buffer.allocUnsafe(MAX_COMMAND_BYTES + 8)
  private readonly threads: number
  /** The slots of the applied and durable counts, every thread's then the main thread's (thread-wire.ts MAIN_SLOT). */
  private readonly slots: readonly number[]
  private readonly appliedWord: number
  private readonly waitingWord: number
  private readonly handshakingWord: number
  /** Whether this read's adds are journaled (read once adding, while PLANE_LOGGING cannot change). */
  private logging = false
  /** The connection whose read is answered (its journal records name it), and its database. */
  private connection = 0
  private db = 0
  private journaled = false

  constructor(memory: PlaneMemory, thread: number) {
    this.words = new Int32Array(memory.control)
    this.counters = new Float64Array(memory.counters, thread * COUNTER_STRIDE * 8, COUNTERS_PER_THREAD)
    this.readerWord = threadWord(thread, THREAD_READING)
    this.addingWord = threadWord(thread, THREAD_ADDING)
    this.appliedWord = PLANE_APPLIED + thread
    this.waitingWord = threadWord(thread, THREAD_WAITING)
    this.handshakingWord = threadWord(thread, THREAD_HANDSHAKING)
    this.journal = new RingWriter(memory.journal)
    this.threads = memory.threads
    this.slots = [...Array.from({ length: memory.threads }, (_, slot) => slot), MAIN_SLOT]
  }

  /** A layout from the main thread, or layouts to drop. */
  received(message: PlaneMessage): void {
    this.lastDb = -1
    this.lastLayout = undefined
    if (message.type === 'forget') {
      const cells = message.cells
      for (let i = 0; i + 1 < cells.length; i += 2) {
        const cell = cells[i]!
        const key = this.keyOfCell.get(cell)
        const layout = key === undefined ? undefined : this.layouts.get(key)
        if (layout === undefined || layout.cell !== cell || layout.version >= cells[i + 1]!) continue
        this.keyOfCell.delete(cell)
        this.layouts.delete(key!)
      }
      return
    }
    if (Atomics.load(this.words, PLANE_CELLS + message.cell) !== message.version) return
    const old = this.layouts.get(message.key)
    if (old !== undefined && this.keyOfCell.get(old.cell) === message.key) this.keyOfCell.delete(old.cell)
    this.layouts.set(message.key, layoutOf(message))
    this.keyOfCell.set(message.cell, message.key)
  }

  /** Whether the main thread lets the threads answer now. */
  get open(): boolean {
    return Atomics.load(this.words, PLANE_OPEN) === 1
  }

  /** The settling generation now (thread-wire.ts PLANE_GENERATION): a connection settled in another is the main thread's. */
  get generation(): number {
    return Atomics.load(this.words, PLANE_GENERATION)
  }

  /**
   * Answers the commands at the start of `buf[0, end)` that can be answered here, for a
   * connection in database `db`, and stops at the first that cannot (or that is not whole).
   */
  answer(buf: Buffer, end: number, db: number, connection: number): Answered {
    const words = this.words
    this.connection = connection
    this.db = db
    this.journaled = false
    // The epoch first, then the cells: a region collected after this store waits for the read to end.
    Atomics.store(words, this.readerWord, Atomics.load(words, PLANE_EPOCH))
    const began = performance.now()
    let pos = 0
    let commands = 0
    let last = 0
    let firstEnd = 0
    const calls = this.calls
    calls.fill(0)
    try {
      while (pos < end) {
        const next = this.scan(buf, pos, end)
        if (next <= 0) break
        const command = this.answerOne(buf, db)
        if (command < 0) break
        if (commands === 0) firstEnd = next
        calls[command]!++
        commands++
        last = command
        pos = next
      }
    } finally {
      if (this.adding) {
        this.publishCounts()
        this.adding = false
        Atomics.store(words, this.addingWord, 0)
        // The main thread waits for this word only once it closed the adds.
        if (Atomics.load(words, PLANE_ADDS) === 0) Atomics.notify(words, this.addingWord)
      }
      Atomics.store(words, this.readerWord, 0)
    }
    const journaled = this.journaled
    if (commands === 0)
      return { used: 0, commands: 0, reply: undefined, last: 0, slow: undefined, need: undefined, journaled }
    const micros = (performance.now() - began) * 1000
    const reply =
      // One reply is written as it is: a shared constant or a buffer of its own, never changed after.
      this.replies.length === 1 ? this.replies[0]! : Buffer.concat(this.replies, this.replyBytes)
    this.replies = []
    this.replyBytes = 0
    const counters = this.counters
    counters[COUNTER_COMMANDS] += commands
    counters[COUNTER_READS]++
    counters[COUNTER_WRITES]++
    counters[COUNTER_INPUT_BYTES] += pos
    counters[COUNTER_OUTPUT_BYTES] += reply.length
    const share = micros / commands
    for (let i = 0; i < calls.length; i++) {
      if (calls[i] === 0) continue
      counters[COUNTER_CALLS + 2 * i] += calls[i]!
      counters[COUNTER_CALLS + 2 * i + 1] += share * calls[i]!
    }
    const slowlog = Atomics.load(words, PLANE_SLOWLOG_MICROS)
    const latency = Atomics.load(words, PLANE_LATENCY_MILLIS)
    const slow =
      (slowlog >= 0 && micros >= slowlog) || (latency > 0 && micros >= latency * 1000)
        ? this.slowRecord(buf, firstEnd, micros, commands)
        : undefined
    // After every answer: any write an answer could show was counted before it was made.
    const need = Atomics.load(words, PLANE_LOGGING) === 1 ? this.pending() : undefined
    return { used: pos, commands, reply, last, slow, need, journaled }
  }

  /** The applied counts now, if some are not durable yet (see {@link Answered.need}). */
  private pending(): Int32Array | undefined {
    const words = this.words
    const slots = this.slots
    let i = 0
    while (
      i < slots.length &&
      Atomics.load(words, PLANE_APPLIED + slots[i]!) === Atomics.load(words, PLANE_DURABLE + slots[i]!)
    )
      i++
    if (i === slots.length) return undefined
    // Read again, all of them: counts that moved since ask for a little more than needed, never less.
    const need = new Int32Array(slots.length)
    for (i = 0; i < slots.length; i++) need[i] = Atomics.load(words, PLANE_APPLIED + slots[i]!)
    return need
  }

  /** This thread's TLS handshakes under way (io-thread.ts), for every thread's admission. */
  countHandshakes(handshaking: number): void {
    Atomics.store(this.words, this.handshakingWord, handshaking)
  }

  /**
   * Whether the TLS port takes one more connection, `handshaking` of this thread's under way: the
   * main thread's clients and every thread's handshakes are under maxclients (server.ts refuses a
   * plaintext connection past it the same way). Counted in INFO rejected_connections when not.
   *
   * The new connection is counted in this thread's word before the others are read (both
   * sequentially consistent), so of two threads admitting at once at least one sees the other's:
   * they never both take the last place (they may both drop, as a client closing meanwhile may
   * let in one that was dropped).
   */
  admitsHandshake(handshaking: number): boolean {
    const words = this.words
    Atomics.store(words, this.handshakingWord, handshaking + 1)
    const total = Atomics.load(words, PLANE_CLIENTS) + handshakesUnderWay(words, this.threads)
    if (total <= Atomics.load(words, PLANE_MAXCLIENTS)) return true
    Atomics.store(words, this.handshakingWord, handshaking)
    this.counters[COUNTER_REJECTED]++
    return false
  }

  /** Whether every count of `need` is durable (the reply holding it may leave). */
  durable(need: Int32Array): boolean {
    const words = this.words
    const slots = this.slots
    for (let i = 0; i < slots.length; i++) {
      // Counts wrap at 2^32: what lies between them is under 2^31.
      if (((Atomics.load(words, PLANE_DURABLE + slots[i]!) - need[i]!) | 0) < 0) return false
    }
    return true
  }

  /**
   * Replies wait: the main thread tells this thread when more is durable. True when `need` is
   * durable already (then nothing waits for the telling): stored first, then looked at, as the main
   * thread stores the durable counts first, then looks at this word.
   */
  awaitDurable(need: Int32Array): boolean {
    Atomics.store(this.words, this.waitingWord, 1)
    return this.durable(need)
  }

  /**
   * Where the plainly framed command at `buf[pos, end)` ends, its items' bounds in
   * {@link starts}/{@link ends}; {@link INCOMPLETE} when it is not whole yet, {@link NOT_PLAIN}
   * when it is framed otherwise (the main thread's parser decides what it is).
   */
  scan(buf: Buffer, pos: number, end: number): number {
    if (buf[pos] !== 0x2a) return NOT_PLAIN
    let at = pos + 1
    const count = readCount(buf, at, end)
    if (count === INCOMPLETE_COUNT) return INCOMPLETE
    if (count <= 0 || count > MAX_ARGS) return NOT_PLAIN
    at = countEnd
    for (let i = 0; i < count; i++) {
      if (at >= end) return INCOMPLETE
      if (buf[at] !== 0x24) return NOT_PLAIN
      const length = readCount(buf, at + 1, end)
      if (length === INCOMPLETE_COUNT) return INCOMPLETE
      if (length < 0 || length > MAX_COMMAND_BYTES) return NOT_PLAIN
      const start = countEnd
      if (start + length + 2 > end) return start + length + 2 - pos > MAX_COMMAND_BYTES ? NOT_PLAIN : INCOMPLETE
      if (buf[start + length] !== 0x0d || buf[start + length + 1] !== 0x0a) return NOT_PLAIN
      this.starts[i] = start
      this.ends[i] = start + length
      at = start + length + 2
      if (at - pos > MAX_COMMAND_BYTES) return NOT_PLAIN
    }
    this.argc = count
    return at
  }

  /**
   * The scanned command's answer added to the replies: its {@link THREAD_COMMANDS} index, or -1
   * when it is not one answered here (another command, another argument count, a key without a
   * current layout).
   */
  private answerOne(buf: Buffer, db: number): number {
    const argc = this.argc
    const command = commandOf(buf, this.starts[0]!, this.ends[0]!)
    if (command < 0 || argc !== arityOf(command, argc)) return -1
    const layout = this.layoutOf(buf, this.starts[1]!, this.ends[1]!, db)
    if (layout === undefined) return -1
    const words = this.words
    if (command >= CARD && layout.countsAt < 0) return -1
    if (command >= FIRST_THREAD_WRITE) {
      if (!this.adding) {
        // Stored before PLANE_ADDS is read: the main thread's quiesce either sees it or was seen.
        this.adding = true
        Atomics.store(words, this.addingWord, 1)
      }
      if (Atomics.load(words, PLANE_ADDS) !== 1) return -1
      this.logging = Atomics.load(words, PLANE_LOGGING) === 1
    }
    if (Atomics.load(words, PLANE_CELLS + layout.cell) !== layout.version) return -1
    if (command === EXISTS) {
      this.push(this.check(layout, this.hash(layout, buf, 2, 0)) ? ONE : ZERO)
      return command
    }
    if (command === CARD) {
      this.publishCounts()
      this.push(Buffer.from(`:${layout.olderItems + Atomics.load(words, layout.countsAt + SHARED_ITEMS)}\r\n`))
      return command
    }
    const first = command === INSERT ? this.insertedItems(buf) : 2
    if (first < 0) return -1
    const count = argc - first
    const found = this.found
    if (command === MEXISTS) {
      for (let i = 0; i < count; i++) found[i] = this.check(layout, this.hash(layout, buf, i + 2, i)) ? 1 : 0
    } else if (!this.add(layout, buf, first, count)) return -1
    if (command === ADD) this.push(found[0] === 1 ? ONE : ZERO)
    else this.push(arrayOfFound(found, count))
    return command
  }

  /**
   * Where the scanned BF.INSERT's items start, when it only adds to the filter there is (main
   * thread: commands/filters/bloom.ts bfInsert): `NOCREATE` and `NONSCALING` (the words it reads so,
   * by their first letter) change nothing for a filter that exists, then `ITEMS` and at least one
   * item. -1 for any other form (`CAPACITY`, `ERROR`, `EXPANSION`, which the main thread checks,
   * or an error): the main thread answers it.
   */
  private insertedItems(buf: Buffer): number {
    const argc = this.argc
    for (let arg = 2; arg < argc; arg++) {
      if (this.ends[arg] === this.starts[arg]) return -1
      const initial = buf[this.starts[arg]!]! | 0x20
      if (initial === 0x6e) continue
      return initial === 0x69 && arg + 1 < argc ? arg + 1 : -1
    }
    return -1
  }

  /**
   * Adds the command's `count` items (from argument `first`) to the layout's filter, their outcomes in {@link found}, as
   * the main thread would (sb.c `SBChain_Add`: 0 when some layer has the item, else set in the
   * newest layer). The room is claimed first, for every item no layer has, atomically against the
   * other threads' claims: a layer never takes more than its capacity, and when it has not room
   * for all of them the command is left to the main thread (false), which grows the filter where
   * a serial server would. An item whose bits another thread set meanwhile answers 0 and gives its
   * room back, so only two adds of one new item at the same instant can both answer 1.
   */
  private add(layout: Layout, buf: Buffer, first: number, count: number): boolean {
    const found = this.found
    const layers = layout.layers
    const newest = layers[layers.length - 1]!
    let absent = 0
    for (let i = 0; i < count; i++) {
      const pair = this.hash(layout, buf, i + first, i)
      // The newest layer read whole (its misses overlap, and the adds below find it in cache).
      let present = newest.clearHashed(pair) === 0
      for (let l = layers.length - 2; l >= 0 && !present; l--) present = layers[l]!.hasHashed(pair)
      found[i] = present ? 0 : 2
      if (!present) absent++
    }
    if (absent === 0) return true
    const words = this.words
    const logging = this.logging
    if (logging) {
      // The record's room first: the whole command at most, with its header.
      let bytes = 8 + this.ends[1]! - this.starts[1]!
      for (let i = 0; i < count; i++) if (found[i] === 2) bytes += 4 + this.ends[i + first]! - this.starts[i + first]!
      if (!this.journal.hasRoom(bytes)) return false
    }
    const at = layout.countsAt
    for (;;) {
      const reserved = Atomics.load(words, at + SHARED_RESERVED)
      if (reserved + absent > newest.capacity) return false
      if (Atomics.compareExchange(words, at + SHARED_RESERVED, reserved, reserved + absent) === reserved) break
    }
    // Counted before any bit is set: a reply that shows one waits for this record (see pending).
    if (logging) Atomics.add(words, this.appliedWord, 1)
    let added = 0
    let flipped = 0
    for (let i = 0; i < count; i++) {
      if (found[i] !== 2) continue
      const bits = newest.orHashed(this.pairs[i]!)
      found[i] = bits > 0 ? 1 : 0
      flipped += bits
      if (bits > 0) added++
    }
    if (added < absent) Atomics.sub(words, at + SHARED_RESERVED, absent - added)
    if (logging) this.journalAdd(buf, first, count)
    // The counts of a read's adds to one filter go out together (a shared line written once).
    if (this.pendingAt !== at) {
      this.publishCounts()
      this.pendingAt = at
    }
    this.pendingItems += added
    this.pendingBits += flipped
    return true
  }

  /**
   * The journal record of the scanned add command: the items that answered 1 (room was made
   * sure of before the claim). Written while the adding word is raised: the main thread's quiesce
   * takes it before any command of its own runs.
   */
  private journalAdd(buf: Buffer, first: number, count: number): void {
    const record = this.record
    const keyStart = this.starts[1]!
    const keyEnd = this.ends[1]!
    record.writeUInt32LE(this.db, 0)
    record.writeUInt32LE(keyEnd - keyStart, 4)
    let at = 8 + buf.copy(record, 8, keyStart, keyEnd)
    for (let i = 0; i < count; i++) {
      if (this.found[i] !== 1) continue
      const start = this.starts[i + first]!
      const end = this.ends[i + first]!
      record.writeUInt32LE(end - start, at)
      at += 4 + buf.copy(record, at + 4, start, end)
    }
    this.journal.offer(JOURNAL_ADD, this.connection, record, 0, at)
    this.journaled = true
  }

  /**
   * Adds the items and bits counted since the last call to their filter's shared counts: before a
   * BF.CARD, before another filter's adds, and at the end of every read, before its replies leave
   * and before the adding word goes back to 0 (the main thread counts them in once it saw that).
   */
  private publishCounts(): void {
    const at = this.pendingAt
    if (at < 0) return
    const words = this.words
    if (this.pendingItems > 0) {
      Atomics.add(words, at + SHARED_ITEMS, this.pendingItems)
      Atomics.add(words, at + SHARED_FOREIGN_ADDS, this.pendingItems)
      this.counters[COUNTER_ADDED] += this.pendingItems
    }
    if (this.pendingBits > 0) Atomics.add(words, at + SHARED_SET_BITS, this.pendingBits)
    this.pendingAt = -1
    this.pendingItems = 0
    this.pendingBits = 0
  }

  /** The layout of the key `buf[start, end)` in database `db`, if this thread holds one. */
  private layoutOf(buf: Buffer, start: number, end: number, db: number): Layout | undefined {
    const last = this.lastKey
    if (db === this.lastDb && end - start === last.length && buf.compare(last, 0, last.length, start, end) === 0)
      return this.lastLayout
    const layout = this.layouts.get(`${db}\n${buf.toString('latin1', start, end)}`)
    this.lastKey = Buffer.from(buf.subarray(start, end))
    this.lastDb = db
    this.lastLayout = layout
    return layout
  }

  /** The hash pair of the scanned command's argument `arg`, in pair `slot`. */
  private hash(layout: Layout, buf: Buffer, arg: number, slot: number): Uint32Array {
    const pair = this.pairs[slot]!
    const start = this.starts[arg]!
    const end = this.ends[arg]!
    if (layout.seed < 0) hashRedisBloom(buf, start, end, pair)
    else hashSeeded(buf, start, end, layout.seed, pair)
    return pair
  }

  /** Whether the item may have been added: some layer, newest first, has all its positions set. */
  private check(layout: Layout, pair: Uint32Array): boolean {
    const layers = layout.layers
    for (let i = layers.length - 1; i >= 0; i--) if (layers[i]!.hasHashed(pair)) return true
    return false
  }

  private push(reply: Buffer): void {
    this.replies.push(reply)
    this.replyBytes += reply.length
  }

  /** The SLOW record (thread-wire.ts): µs, commands, the first command's arguments. */
  private slowRecord(buf: Buffer, firstEnd: number, micros: number, commands: number): Buffer {
    // The first command again: its bounds were overwritten by the later ones.
    this.scan(buf, 0, firstEnd)
    const argc = this.argc
    const kept = Math.min(argc, 32)
    const parts: Buffer[] = []
    const head = Buffer.alloc(16)
    head.writeDoubleLE(micros, 0)
    head.writeUInt32LE(commands, 8)
    head.writeUInt32LE(argc, 12)
    parts.push(head)
    // Whole: the main thread shortens them as the SLOWLOG does (commands/state/slowlog.ts).
    for (let i = 0; i < kept; i++) {
      const start = this.starts[i]!
      const end = this.ends[i]!
      const length = Buffer.alloc(4)
      length.writeUInt32LE(end - start, 0)
      parts.push(length, buf.subarray(start, end))
    }
    return Buffer.concat(parts)
  }
}

/** Where the last {@link readCount} stopped: just past its `\r\n`. */
let countEnd = 0
const INCOMPLETE_COUNT = -2

/**
 * The decimal count at `buf[at, end)` ended by `\r\n` (no sign, no leading zero but `0` itself),
 * {@link INCOMPLETE_COUNT} when the line is not whole, -1 when it is not such a count.
 */
function readCount(buf: Buffer, at: number, end: number): number {
  let value = 0
  let digits = 0
  while (at < end) {
    const c = buf[at]!
    if (c === 0x0d) {
      if (at + 1 >= end) return INCOMPLETE_COUNT
      if (buf[at + 1] !== 0x0a || digits === 0) return -1
      countEnd = at + 2
      return value
    }
    if (c < 0x30 || c > 0x39 || digits >= 9 || (digits === 1 && value === 0)) return -1
    value = value * 10 + (c - 0x30)
    digits++
    at++
  }
  return INCOMPLETE_COUNT
}

/** The command's {@link THREAD_COMMANDS} index (its name in any case), -1 for another. */
function commandOf(buf: Buffer, start: number, end: number): number {
  const length = end - start
  if (length < 6 || length > 10) return -1
  if ((buf[start]! | 0x20) !== 0x62 || (buf[start + 1]! | 0x20) !== 0x66 || buf[start + 2] !== 0x2e) return -1
  for (let command = 0; command < THREAD_COMMANDS.length; command++) {
    const name = THREAD_COMMANDS[command]!
    if (name.length !== length) continue
    let i = 3
    while (i < length && (buf[start + i]! | 0x20) === name.charCodeAt(i)) i++
    if (i === length) return command
  }
  return -1
}

/** The argument count a command is answered here with: `argc` when it may have that many, else another. */
function arityOf(command: number, argc: number): number {
  if (command === EXISTS || command === ADD) return 3
  if (command === CARD) return 2
  if (command === INSERT) return argc >= 4 ? argc : 4
  return argc >= 3 ? argc : 3
}

/** An array reply of `count` integers, 1 where `found` is 1, else 0. */
function arrayOfFound(found: Uint8Array, count: number): Buffer {
  const header = `*${count}\r\n`
  const out = Buffer.allocUnsafe(header.length + 4 * count)
  let at = out.write(header, 0, 'latin1')
  for (let i = 0; i < count; i++) {
    out[at] = 0x3a
    out[at + 1] = found[i] === 1 ? 0x31 : 0x30
    out[at + 2] = 0x0d
    out[at + 3] = 0x0a
    at += 4
  }
  return out
}

function layoutOf(message: PublishedLayout): Layout {
  const layers = message.layers.map(
    (layer) =>
      new BloomLayer({
        capacity: layer.capacity,
        errorRate: layer.errorRate,
        bitsPerEntry: layer.bitsPerEntry,
        hashCount: layer.hashCount,
        bitCount: layer.bitCount,
        items: 0,
        bitmap: new Uint8Array(layer.memory, layer.offset, layer.bitCount / 8),
        setBits: 0,
      }),
  )
  return {
    cell: message.cell,
    version: message.version,
    seed: message.seed,
    layers,
    countsAt: message.counts ? PLANE_COUNTS + message.cell * PLANE_COUNT_STRIDE : -1,
    olderItems: message.olderItems,
  }
}
