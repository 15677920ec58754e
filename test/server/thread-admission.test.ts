/**
 * The TLS port's admission on the I/O threads (server/thread-answers.ts admitsHandshake): a
 * connection in its handshake counts against maxclients over every thread, from the moment its
 * thread admits it, so that a second thread admitting at once sees it. Two threads' answers over
 * one shared memory, as io-threads.ts gives them, with no server: the order of the stores and
 * loads is what is checked (the same in any interleaving, as they are sequentially consistent).
 */
import { describe, expect, it } from 'vitest'
import { type PlaneMemory, ThreadAnswers } from '../../src/server/thread-answers.js'
import { createRing } from '../../src/server/thread-ring.js'
import {
  COUNTER_REJECTED,
  COUNTER_STRIDE,
  JOURNAL_BYTES,
  PLANE_CLIENTS,
  PLANE_MAXCLIENTS,
  PLANE_WORDS,
} from '../../src/server/thread-wire.js'

function plane(threads: number, clients: number, maxclients: number): { memory: PlaneMemory; words: Int32Array } {
  const control = new SharedArrayBuffer(PLANE_WORDS * 4)
  const words = new Int32Array(control)
  words[PLANE_CLIENTS] = clients
  words[PLANE_MAXCLIENTS] = maxclients
  const memory = {
    control,
    counters: new SharedArrayBuffer(threads * COUNTER_STRIDE * 8),
    journal: createRing(JOURNAL_BYTES),
    threads,
  }
  return { memory, words }
}

describe('TLS handshakes admitted by the I/O threads', () => {
  it('the last place goes to one thread: the other, admitting before the first told its count, drops', () => {
    const { memory } = plane(2, 3, 4)
    const first = new ThreadAnswers(memory, 0)
    const second = new ThreadAnswers(memory, 1)
    // The first thread admits; its listener has not counted the handshake yet (TlsListeners
    // counts after admitting): the second must see it all the same.
    expect(first.admitsHandshake(0)).toBe(true)
    expect(second.admitsHandshake(0)).toBe(false)
    const rejected = new Float64Array(memory.counters)
    expect(rejected[COUNTER_STRIDE + COUNTER_REJECTED]).toBe(1)
    expect(rejected[COUNTER_REJECTED]).toBe(0)
    // The first handshake ends (its connection closed): the place is free again.
    first.countHandshakes(0)
    expect(second.admitsHandshake(0)).toBe(true)
    second.countHandshakes(1)
    expect(first.admitsHandshake(0)).toBe(false)
  })

  it("a refused connection is not left counted: the thread's own handshakes and the clients are what count", () => {
    const { memory, words } = plane(3, 0, 3)
    const threads = [0, 1, 2].map((thread) => new ThreadAnswers(memory, thread))
    expect(threads[0]!.admitsHandshake(0)).toBe(true)
    threads[0]!.countHandshakes(1)
    expect(threads[0]!.admitsHandshake(1)).toBe(true)
    threads[0]!.countHandshakes(2)
    expect(threads[1]!.admitsHandshake(0)).toBe(true)
    threads[1]!.countHandshakes(1)
    // Full: every thread drops, and dropping leaves each count as it was.
    for (let i = 0; i < 5; i++) {
      expect(threads[2]!.admitsHandshake(0)).toBe(false)
      expect(threads[1]!.admitsHandshake(1)).toBe(false)
    }
    // Two handshakes end on the first thread, one client joins the main thread: one place.
    threads[0]!.countHandshakes(0)
    words[PLANE_CLIENTS] = 1
    expect(threads[2]!.admitsHandshake(0)).toBe(true)
    expect(threads[1]!.admitsHandshake(1)).toBe(false)
  })
})
