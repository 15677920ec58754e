import { describe, expect, it } from 'vitest'
import { crc16, keyHashSlot, slotOf, CLUSTER_SLOTS } from '../../src/core/key-slot.js'

describe('key → hash slot (redis cluster.c keyHashSlot)', () => {
  it('is CRC16-XMODEM', () => {
    expect(crc16(Buffer.from('123456789'))).toBe(0x31c3)
    expect(crc16(Buffer.alloc(0))).toBe(0)
  })

  it('hashes the tag between the first { and the first } after it', () => {
    // Values measured with redis 7.0.15 CLUSTER KEYSLOT.
    expect(slotOf('{user1000}.following')).toBe(3443)
    expect(slotOf('{user1000}.followers')).toBe(3443)
    expect(slotOf('foo')).toBe(12182)
    expect(slotOf('{}')).toBe(15257)
    expect(slotOf('{}}:ba}bx')).toBe(13402)
  })

  it('hashes the whole key for an empty tag or an unclosed brace', () => {
    expect(slotOf('a{}b')).toBe(crc16(Buffer.from('a{}b')) % CLUSTER_SLOTS)
    expect(slotOf('a{b')).toBe(crc16(Buffer.from('a{b')) % CLUSTER_SLOTS)
    expect(slotOf('x{a}y{b}')).toBe(slotOf('a'))
  })

  it('reads a key inside a larger buffer', () => {
    const buffer = Buffer.from('**foo**')
    expect(keyHashSlot(buffer, 2, 5)).toBe(12182)
  })
})
