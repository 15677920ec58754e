/**
 * What an I/O thread and the main thread say to each other about connections (io-threads.ts,
 * io-thread.ts): the types of the records they pass through their rings (thread-ring.ts), each
 * about one connection, by its number on that I/O thread.
 */

/** From an I/O thread: a connection was accepted; payload `remoteAddress\nremotePort\nlocalAddress\nlocalPort`. */
export const OPENED = 1
/** Either way: bytes read from the connection (to main), or to write to it (to the I/O thread). */
export const BYTES = 2
/** From an I/O thread: the connection closed. To it: end the connection once what was written went. */
export const CLOSED = 3
/** From an I/O thread: a socket error's text (a close follows). */
export const FAILED = 4
/** From an I/O thread: the bytes its socket holds unsent (u32), reported while there are any and once more at 0. */
export const UNSENT = 5
/** To an I/O thread: close the connection now, dropping what it holds unsent. */
export const DESTROY = 6
/** To an I/O thread: stop reading the connection. */
export const PAUSE = 7
/** To an I/O thread: read the connection again. */
export const RESUME = 8
/** To an I/O thread: TCP keep-alive probes every u32 milliseconds. */
export const KEEPALIVE = 9

/** Bytes of each ring between two threads (one each way). */
export const RING_BYTES = 512 * 1024
