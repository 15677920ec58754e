/**
 * A one-way ring of records in shared memory between two threads (one writes, one reads): how an
 * I/O thread and the main thread pass connections' bytes (io-threads.ts, io-thread.ts).
 *
 * Why not postMessage: posting a buffer costs 5-10 µs of the sender's time (serialization, the
 * transfer, the wake-up), more than a whole request's command. A ring costs a copy; the reader is
 * woken (one postMessage of a number, about 1 µs) only when it went to sleep, so a busy reader
 * takes every writer's records without a single message. (`Atomics.waitAsync` and `notify` instead
 * of the port were measured no cheaper for the main thread: both wake the other loop through its
 * libuv async handle, a system call each.)
 *
 * Records: [type u8][connection u32][payload length u32][payload], written end to end; a record
 * that does not fit before the end of the memory is preceded by a one-byte {@link WRAP} and written
 * at the start. A payload larger than a quarter of the ring is cut into several records (only
 * bytes are ever that large, and a connection's bytes may come in any number of records). When
 * the ring is full the writer keeps the rest in order and asks to be woken once the reader made
 * room.
 *
 * Positions count bytes written and read since the start, modulo 2^32 (in an Int32Array; the
 * difference of two is what lies between them as long as the ring is under 2 GiB).
 */

/** Not a record: the rest of the memory is skipped. */
const WRAP = 0
const HEADER_BYTES = 9
/**
 * Indexes in the control words: the reader's ({@link READ}, {@link READER_SLEEPS}) and the
 * writer's ({@link WRITTEN}, {@link WRITER_WAITS}) 128 bytes apart, so that the two threads' stores
 * land on cache lines of their own (two lines: processors fetch lines in pairs) and each reads the
 * other's only when it needs to.
 */
const READ = 0
/** 1 while the reader sleeps: a writer that adds a record must wake it. */
const READER_SLEEPS = 1
const WRITTEN = 32
/** 1 while the writer holds records that did not fit: the reader must wake it when it made room. */
const WRITER_WAITS = 33
const CONTROL_BYTES = 256

/** A ring's shared memory: `bytes` of records (a power of two) after the control words. */
export function createRing(bytes: number): SharedArrayBuffer {
  if ((bytes & (bytes - 1)) !== 0) throw new Error('a ring holds a power of two bytes')
  const shared = new SharedArrayBuffer(CONTROL_BYTES + bytes)
  // The reader starts asleep: the first record wakes it.
  new Int32Array(shared, 0, CONTROL_BYTES / 4)[READER_SLEEPS] = 1
  return shared
}

class RingView {
  protected readonly control: Int32Array
  protected readonly data: Buffer
  protected readonly capacity: number

  constructor(shared: SharedArrayBuffer) {
    this.control = new Int32Array(shared, 0, CONTROL_BYTES / 4)
    this.capacity = shared.byteLength - CONTROL_BYTES
    this.data = Buffer.from(shared, CONTROL_BYTES, this.capacity)
  }
}

/** A record kept by the writer until the ring has room. */
interface Waiting {
  readonly type: number
  readonly connection: number
  readonly lead: number | undefined
  readonly payload: Buffer
}

export class RingWriter extends RingView {
  private written = 0
  /**
   * The reader's position when last read: it only moves on, so room counted from it is never more
   * than there is, and the writer reads the reader's word again only when that is not enough.
   */
  private readSeen = 0
  private readonly waiting: Waiting[] = []
  private readonly largest: number

  constructor(shared: SharedArrayBuffer) {
    super(shared)
    this.largest = this.capacity / 4 - HEADER_BYTES
  }

  /** Whether records wait for room (the reader wakes the writer once it made some). */
  get full(): boolean {
    return this.waiting.length > 0
  }

  /**
   * Adds a record whose payload is `payload[start, end)` (none by default), after the u32 `lead`
   * when one is given (each record of a cut payload starts with it).
   */
  put(
    type: number,
    connection: number,
    payload?: Uint8Array,
    start = 0,
    end = payload?.length ?? 0,
    lead?: number,
  ): void {
    while (end - start > this.largest) {
      this.put(type, connection, payload, start, start + this.largest, lead)
      start += this.largest
    }
    if (this.waiting.length === 0 && this.write(type, connection, payload, start, end, lead)) return
    this.waiting.push({
      type,
      connection,
      lead,
      payload: payload === undefined ? Buffer.alloc(0) : Buffer.from(payload.subarray(start, end)),
    })
    if (this.waiting.length === 1) this.waitForRoom()
  }

  /**
   * Whether a record of `payloadBytes` would be written at once: nothing waits and the ring has
   * room. Only the writer fills the ring, so it stays true until the writer writes.
   */
  hasRoom(payloadBytes: number): boolean {
    return this.waiting.length === 0 && payloadBytes <= this.largest && this.fits(HEADER_BYTES + payloadBytes)
  }

  /** Writes a record at once, or nothing when {@link hasRoom} is false: for a writer that never waits. */
  offer(type: number, connection: number, payload: Uint8Array, start: number, end: number): boolean {
    return this.hasRoom(end - start) && this.write(type, connection, payload, start, end, undefined)
  }

  /**
   * Asks the reader to wake this writer when it makes room, then looks once more: the reader may
   * have made it between the failed write and the flag, and then would not have seen the flag.
   */
  private waitForRoom(): void {
    Atomics.store(this.control, WRITER_WAITS, 1)
    const first = this.waiting[0]!
    if (this.fits(HEADER_BYTES + (first.lead === undefined ? 0 : 4) + first.payload.length)) this.retry()
  }

  /** Writes what waited, as far as the ring has room now. */
  retry(): void {
    const waiting = this.waiting
    let done = 0
    while (done < waiting.length) {
      const record = waiting[done]!
      if (!this.write(record.type, record.connection, record.payload, 0, record.payload.length, record.lead)) break
      done++
    }
    waiting.splice(0, done)
    if (waiting.length > 0) this.waitForRoom()
  }

  /**
   * Whether the reader sleeps and must be woken: true once per sleep (the flag is taken), so that
   * of several writers, or several turns of one, only one sends the wake-up.
   */
  takeSleepingReader(): boolean {
    return (
      Atomics.load(this.control, READER_SLEEPS) === 1 &&
      Atomics.compareExchange(this.control, READER_SLEEPS, 1, 0) === 1
    )
  }

  /** Whether a record of `size` bytes fits now (with the wrap it may need). */
  private fits(size: number): boolean {
    const toEnd = this.capacity - (this.written & (this.capacity - 1))
    const needed = toEnd < size ? toEnd + size : size
    if (needed <= this.capacity - ((this.written - this.readSeen) | 0)) return true
    this.readSeen = Atomics.load(this.control, READ)
    return needed <= this.capacity - ((this.written - this.readSeen) | 0)
  }

  private write(
    type: number,
    connection: number,
    payload: Uint8Array | undefined,
    start: number,
    end: number,
    lead: number | undefined,
  ): boolean {
    const leadBytes = lead === undefined ? 0 : 4
    const size = HEADER_BYTES + leadBytes + end - start
    if (!this.fits(size)) return false
    let at = this.written & (this.capacity - 1)
    const toEnd = this.capacity - at
    const data = this.data
    if (toEnd < size) {
      data[at] = WRAP
      this.written = (this.written + toEnd) | 0
      at = 0
    }
    data[at] = type
    data.writeUInt32LE(connection >>> 0, at + 1)
    data.writeUInt32LE(leadBytes + end - start, at + 5)
    if (lead !== undefined) data.writeUInt32LE(lead >>> 0, at + HEADER_BYTES)
    if (end > start) data.set(payload!.subarray(start, end), at + HEADER_BYTES + leadBytes)
    this.written = (this.written + size) | 0
    Atomics.store(this.control, WRITTEN, this.written)
    return true
  }
}

export class RingReader extends RingView {
  private read = 0

  /** Whether the last drain stopped at its budget with records left. */
  more = false

  /**
   * Calls `record` for each record written so far, in order, until `budget` bytes were taken;
   * `payload` is a view of the ring, valid during the call only. Returns whether the writer waits
   * for the room this made (it must be woken).
   */
  drain(record: (type: number, connection: number, payload: Buffer) => void, budget: number): boolean {
    const data = this.data
    const mask = this.capacity - 1
    const start = this.read
    let read = start
    let written = Atomics.load(this.control, WRITTEN)
    this.more = false
    while (read !== written) {
      if (((read - start) | 0) >= budget) {
        this.more = true
        break
      }
      const at = read & mask
      if (data[at] === WRAP) {
        read = (read + this.capacity - at) | 0
        continue
      }
      const size = data.readUInt32LE(at + 5)
      const from = at + HEADER_BYTES
      record(data[at]!, data.readUInt32LE(at + 1), data.subarray(from, from + size))
      read = (read + HEADER_BYTES + size) | 0
      // Room made each time the reader catches up with the writer, not at the end only: a long
      // drain frees a writer that waits early.
      if (read === written) {
        this.read = read
        Atomics.store(this.control, READ, read)
        written = Atomics.load(this.control, WRITTEN)
      }
    }
    this.read = read
    Atomics.store(this.control, READ, read)
    return (
      Atomics.load(this.control, WRITER_WAITS) === 1 && Atomics.compareExchange(this.control, WRITER_WAITS, 1, 0) === 1
    )
  }

  /**
   * Marks the reader asleep; false when records came meanwhile (then it stays awake and drains
   * again), so a record written just before the flag is never left unread.
   */
  sleep(): boolean {
    Atomics.store(this.control, READER_SLEEPS, 1)
    if (Atomics.load(this.control, WRITTEN) === this.read) return true
    Atomics.store(this.control, READER_SLEEPS, 0)
    return false
  }

  /** Marks the reader awake (it is draining): writers need not wake it. */
  wake(): void {
    Atomics.store(this.control, READER_SLEEPS, 0)
  }
}

/** How a channel's owner is woken by its peer, and how it defers work to the end of its turn. */
export interface ChannelPeer {
  /** Posts the peer a wake-up (a number: about 1 µs). */
  wake(): void
  /** Records wait for room in the ring out (the peer is behind): stop taking more work. */
  full?(): void
  /** The ring out has room again for all that waited. */
  room?(): void
  /** Runs `work` once the current callback returned (process.nextTick or setImmediate). */
  defer(work: () => void): void
}

/** Bytes of records one wake-up takes before the thread's other work gets a turn. */
const DRAIN_BUDGET_BYTES = 1024 * 1024

/**
 * Both directions between two threads: records out through one ring, records in through the
 * other, and the wake-ups that make each side look at them.
 */
export class RingChannel {
  private readonly writer: RingWriter
  private readonly reader: RingReader
  private signalScheduled = false
  private readonly signal = (): void => {
    this.signalScheduled = false
    if (this.writer.takeSleepingReader()) this.peer.wake()
  }
  private readonly again = (): void => this.woken()

  constructor(
    outbound: SharedArrayBuffer,
    inbound: SharedArrayBuffer,
    private readonly peer: ChannelPeer,
    private readonly onRecord: (type: number, connection: number, payload: Buffer) => void,
  ) {
    this.writer = new RingWriter(outbound)
    this.reader = new RingReader(inbound)
  }

  put(type: number, connection: number, payload?: Uint8Array, start?: number, end?: number, lead?: number): void {
    const wasFull = this.writer.full
    this.writer.put(type, connection, payload, start, end, lead)
    if (!wasFull && this.writer.full) this.peer.full?.()
    this.scheduleSignal()
  }

  /** Adds a record whose payload is one u32. */
  putNumber(type: number, connection: number, value: number): void {
    this.put(type, connection, undefined, 0, 0, value)
  }

  /** The peer woke this side: take what it wrote, write what waited for room, sleep when done. */
  woken(): void {
    this.reader.wake()
    for (;;) {
      if (this.reader.drain(this.onRecord, DRAIN_BUDGET_BYTES)) this.peer.wake()
      if (this.writer.full) {
        this.writer.retry()
        this.scheduleSignal()
        if (!this.writer.full) this.peer.room?.()
      }
      if (this.reader.more) {
        // Awake still (writers need not wake it): the rest after the thread's other work.
        setImmediate(this.again)
        return
      }
      if (this.reader.sleep()) return
    }
  }

  private scheduleSignal(): void {
    if (this.signalScheduled) return
    this.signalScheduled = true
    this.peer.defer(this.signal)
  }
}
