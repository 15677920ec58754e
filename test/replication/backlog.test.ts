/** The replication backlog's circular buffer: offsets as redis counts them, wrap-around, resize. */
import { describe, expect, it } from 'vitest'
import { Backlog } from '../../src/replication/backlog.js'

/** The stream bytes 1..n as letters, to see which offsets a slice holds. */
function stream(from: number, length: number): Buffer {
  return Buffer.from(Array.from({ length }, (_, i) => 97 + ((from + i - 1) % 26)))
}

describe('Backlog', () => {
  it('holds the last `size` bytes and serves any offset inside them, across the wrap', () => {
    const backlog = new Backlog(10, 1)
    expect(backlog.holds(1)).toBe(true)
    expect(backlog.from(1).length).toBe(0)
    backlog.append(stream(1, 7))
    backlog.append(stream(8, 7))
    expect([backlog.firstByteOffset, backlog.histlen]).toEqual([5, 10])
    expect(backlog.holds(4)).toBe(false)
    expect(backlog.holds(15)).toBe(true)
    expect(backlog.holds(16)).toBe(false)
    expect(backlog.from(5)).toEqual(stream(5, 10))
    expect(backlog.from(12)).toEqual(stream(12, 3))
  })

  it('keeps only the tail of an append larger than itself', () => {
    const backlog = new Backlog(4, 101)
    backlog.append(stream(101, 3))
    backlog.append(stream(104, 9))
    expect([backlog.firstByteOffset, backlog.histlen]).toEqual([109, 4])
    expect(backlog.from(109)).toEqual(stream(109, 4))
  })

  it('resizes keeping the newest bytes', () => {
    const backlog = new Backlog(8, 1)
    backlog.append(stream(1, 12))
    backlog.resize(3)
    expect([backlog.firstByteOffset, backlog.histlen, backlog.size]).toEqual([10, 3, 3])
    expect(backlog.from(10)).toEqual(stream(10, 3))
    backlog.resize(6)
    backlog.append(stream(13, 2))
    expect(backlog.from(10)).toEqual(stream(10, 5))
  })
})
