/**
 * What an I/O thread and the main thread say to each other about connections (io-threads.ts,
 * io-thread.ts): the types of the records they pass through their rings (thread-ring.ts), each
 * about one connection, by its number on that I/O thread.
 */
import { SHARED_COUNT_WORDS } from '../core/bloom-layer.js'

/** From an I/O thread: a connection was accepted; payload `remoteAddress\nremotePort\nlocalAddress\nlocalPort`. */
export const OPENED = 1
/** To an I/O thread: bytes to write to the connection. */
export const BYTES = 2
/**
 * From an I/O thread: bytes read from the connection, after the count of bytes the thread took for
 * it so far (u32, modulo 2^32, as in {@link UNSENT}): what the client could have read before it
 * sent them is known to be sent.
 */
export const READ = 12
/** From an I/O thread: the connection closed. To it: end the connection once what was written went. */
export const CLOSED = 3
/** From an I/O thread: a socket error's text (a close follows). */
export const FAILED = 4
/**
 * From an I/O thread, asked for by {@link BYTES_THEN_REPORT}: how many bytes it took for the
 * connection so far (u32, modulo 2^32), and how many its socket holds unsent (u32). Sent once
 * more when the socket drained.
 */
export const UNSENT = 5
/** To an I/O thread: close the connection now, dropping what it holds unsent. */
export const DESTROY = 6
/** To an I/O thread: stop reading the connection. */
export const PAUSE = 7
/** To an I/O thread: read the connection again. */
export const RESUME = 8
/** To an I/O thread: TCP keep-alive probes every u32 milliseconds. */
export const KEEPALIVE = 9
/** To an I/O thread: bytes to write, then an {@link UNSENT} report. */
export const BYTES_THEN_REPORT = 10
/**
 * To an I/O thread: how many bytes read from the connection the server took so far (u32, modulo
 * 2^32). A thread reads a connection at most {@link READ_AHEAD_BYTES} ahead of it, so that a client
 * whose reading the server paused (it does not read its replies, it is blocked) cannot pile its
 * requests up in the server's memory.
 */
export const CONSUMED = 11
/** How far ahead of the server an I/O thread reads a connection. */
export const READ_AHEAD_BYTES = 1024 * 1024
/** The server reports what it took of a connection every this many bytes. */
export const CONSUMED_EVERY_BYTES = READ_AHEAD_BYTES / 4

/** Bytes of each ring between two threads (one each way). */
export const RING_BYTES = 256 * 1024

/**
 * To an I/O thread: the server ran everything read from the connection so far and holds nothing
 * of it (no command waits, none is half read), and the connection may have its checks answered
 * by its thread (thread-answers.ts): u32 bytes the server took from it (modulo 2^32, as
 * {@link CONSUMED}), u32 its database, u32 the settling generation ({@link PLANE_GENERATION}).
 * Sent after the replies of what it ran.
 */
export const SETTLED = 13
/**
 * From an I/O thread: it answered commands of the connection itself since its last such record
 * (what the connection's idle time and CLIENT LIST's `cmd=` read); u8 the last one's
 * {@link THREAD_COMMANDS} index.
 */
export const ACTIVE = 14
/**
 * From an I/O thread: a read whose commands it answered took at least the SLOWLOG's or the latency
 * monitor's threshold: f64 µs, u32 commands, u32 the first one's argument count, then each of its
 * first (at most 32) arguments as u32 length and bytes.
 */
export const SLOW = 15
/**
 * From an I/O thread: it wrote records of its adds to its journal (thread-plane.ts): the main
 * thread takes them into the append-only log and the replicas' stream.
 */
export const JOURNALED = 16

/**
 * A record of an I/O thread's journal (a ring of its own, thread-ring.ts, read by the main thread
 * only): one add command's items that answered 1, under the connection's number: u32 database,
 * u32 key length, the key, then each item as u32 length and bytes.
 */
export const JOURNAL_ADD = 1
/** Bytes of each I/O thread's journal. */
export const JOURNAL_BYTES = 256 * 1024

/** The commands an I/O thread answers itself, by the index its records name them with. */
export const THREAD_COMMANDS = ['bf.exists', 'bf.mexists', 'bf.card', 'bf.add', 'bf.madd', 'bf.insert'] as const
/** The first of {@link THREAD_COMMANDS} that writes: the adds. */
export const FIRST_THREAD_WRITE = 3

/**
 * The words of the memory every thread shares with the main thread (thread-plane.ts), as Int32:
 * whether the threads may answer at all and whether they may add, the reclaim epoch, the SLOWLOG
 * and latency thresholds; then each thread's own words ({@link threadWord}); the applied and
 * durable counts; the version of each cell (one per key whose layout was sent), then each cell's
 * counts.
 *
 * A word one thread stores to often sits apart ({@link PLANE_LINE_WORDS}) from the words other
 * threads read or store to often: a store takes the cache line from every other core, and the next
 * read there waits for it. A thread's reading and adding words change on every read; the words
 * every thread reads on every command stay on a line no thread stores to while serving.
 */
export const PLANE_OPEN = 0
export const PLANE_EPOCH = 1
export const PLANE_SLOWLOG_MICROS = 2
export const PLANE_LATENCY_MILLIS = 3
/** 1 while the threads may add (thread-plane.ts recheck), 0 from the main thread's quiesce on. */
export const PLANE_ADDS = 4
/**
 * 1 while writes are recorded (the append-only log is on, or a replica takes the stream): the
 * threads journal their adds, and hold every reply until what it may show is durable
 * ({@link PLANE_APPLIED}). Changed only while the adds are closed.
 */
export const PLANE_LOGGING = 5
/**
 * The main thread's clients and maxclients (server.ts): with every thread's TLS handshakes under
 * way ({@link THREAD_HANDSHAKING}), what a thread's TLS port admits a new connection by, as redis
 * counts a TLS connection against maxclients from its accept.
 */
export const PLANE_CLIENTS = 6
export const PLANE_MAXCLIENTS = 7
/**
 * The settling generation: a connection is answered by its thread only while the generation it
 * was settled in ({@link SETTLED}) is this one. Moved on by any change to what a settled
 * connection may run (an ACL change), before the reply of the command that made it.
 */
export const PLANE_GENERATION = 8
/** Words from one group to the next that different threads store to: 128 bytes, two cache lines (processors fetch lines in pairs). */
export const PLANE_LINE_WORDS = 32
/** At most this many I/O threads. */
export const PLANE_MAX_THREADS = 128
/** First of the threads' own words, {@link PLANE_LINE_WORDS} per I/O thread (see {@link threadWord}). */
export const PLANE_THREADS = PLANE_LINE_WORDS
/** A thread's reading epoch (0: not reading). */
export const THREAD_READING = 0
/** 1 while the thread may be adding. */
export const THREAD_ADDING = 1
/** 1 while it holds replies (the main thread then tells it when more is durable). */
export const THREAD_WAITING = 2
/** Its TLS handshakes under way. */
export const THREAD_HANDSHAKING = 3

/** The index of I/O thread `thread`'s word `word` (THREAD_*). */
export function threadWord(thread: number, word: number): number {
  return PLANE_THREADS + thread * PLANE_LINE_WORDS + word
}

/** The TLS handshakes under way on all `threads` I/O threads ({@link THREAD_HANDSHAKING}). */
export function handshakesUnderWay(words: Int32Array, threads: number): number {
  let count = 0
  for (let thread = 0; thread < threads; thread++) count += Atomics.load(words, threadWord(thread, THREAD_HANDSHAKING))
  return count
}

/**
 * First of the applied counts, one per I/O thread then one for the main thread ({@link MAIN_SLOT}),
 * while {@link PLANE_LOGGING}: a thread's journal records (raised before the record's bits are set),
 * the main thread's write commands (raised before each runs). A reply may show every write counted
 * when it was made, so it leaves once each {@link PLANE_DURABLE} count reached what it saw here.
 * Side by side, not apart: a thread reads all of them for each reply.
 */
export const PLANE_APPLIED = PLANE_THREADS + PLANE_MAX_THREADS * PLANE_LINE_WORDS
/** The slot of the main thread's count in {@link PLANE_APPLIED} and {@link PLANE_DURABLE}. */
export const MAIN_SLOT = PLANE_MAX_THREADS
/** The applied or the durable counts' words: every slot's, to the next group. */
const SLOT_WORDS = PLANE_MAX_THREADS + PLANE_LINE_WORDS
/** First of the durable counts: how many of each slot's applied writes are in the log (under its fsync policy) and the stream. */
export const PLANE_DURABLE = PLANE_APPLIED + SLOT_WORDS
/** First cell. */
export const PLANE_CELLS = PLANE_DURABLE + SLOT_WORDS
/** Cells: keys whose layout can be held by the threads at once. */
export const PLANE_CELL_COUNT = 65536
/**
 * First of the cells' counts: a cell's newest layer's counts (core/bloom-layer.ts
 * SHARED_COUNT_WORDS words from `PLANE_COUNTS + cell * PLANE_COUNT_STRIDE`), each cell's on a
 * cache line of its own, as threads adding to two filters store to two cells' counts.
 */
export const PLANE_COUNTS = PLANE_CELLS + PLANE_CELL_COUNT
export const PLANE_COUNT_STRIDE = Math.ceil(SHARED_COUNT_WORDS / 16) * 16
/** Int32 words of the shared memory. */
export const PLANE_WORDS = PLANE_COUNTS + PLANE_CELL_COUNT * PLANE_COUNT_STRIDE

/**
 * Each I/O thread's counters (Float64, written by that thread only, read by the main thread): what
 * it answered itself, folded into INFO by the main thread.
 */
export const COUNTER_COMMANDS = 0
export const COUNTER_READS = 1
export const COUNTER_WRITES = 2
export const COUNTER_INPUT_BYTES = 3
export const COUNTER_OUTPUT_BYTES = 4
/** Items the thread's adds added (the server's dirty counter). */
export const COUNTER_ADDED = 5
/** Connections its TLS port dropped before their handshake (maxclients: INFO rejected_connections). */
export const COUNTER_REJECTED = 6
/** Then calls and µs of each of {@link THREAD_COMMANDS}, in order. */
export const COUNTER_CALLS = 7
export const COUNTERS_PER_THREAD = COUNTER_CALLS + 2 * THREAD_COMMANDS.length
/** From one thread's counters to the next's: whole 128-byte groups (see {@link PLANE_LINE_WORDS}), as each thread stores to its own on every command. */
export const COUNTER_STRIDE = Math.ceil(COUNTERS_PER_THREAD / 16) * 16
