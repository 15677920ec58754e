/**
 * What an I/O thread and the main thread say to each other about connections (io-threads.ts,
 * io-thread.ts): the types of the records they pass through their rings (thread-ring.ts), each
 * about one connection, by its number on that I/O thread.
 */

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
