/**
 * The replication stream's bytes (src/replication/replication-state.ts): what is staged is
 * counted at once and reaches the sinks once, in order with what is fed, before anything else
 * does, and never a sink attached after it.
 */
import { describe, expect, it } from 'vitest'
import { ReplicationState } from '../../src/replication/replication-state.js'

/** A sink that keeps copies of what it is handed (what it is handed is only valid during the call). */
function recorder(state: ReplicationState): { seen: string[]; detach: () => void } {
  const seen: string[] = []
  const detach = state.attach((bytes) => seen.push(bytes.toString('latin1')))
  return { seen, detach }
}

describe('ReplicationState.stage', () => {
  it('counts staged bytes at once and hands them over together, at the end of the turn', async () => {
    const state = new ReplicationState()
    const { seen } = recorder(state)
    const scratch = Buffer.from('one')
    state.stage(scratch)
    // The caller may reuse its buffer at once.
    scratch.write('two')
    state.stage(scratch)
    expect(state.masterReplOffset).toBe(6)
    expect(seen).toEqual([])
    await new Promise((resolve) => setImmediate(resolve))
    expect(seen).toEqual(['onetwo'])
  })

  it('hands staged bytes over before a feed, an attach, a detach or a new position', () => {
    const state = new ReplicationState()
    const first = recorder(state)
    state.stage(Buffer.from('a'))
    state.feed(Buffer.from('b'))
    expect(first.seen).toEqual(['a', 'b'])
    state.stage(Buffer.from('c'))
    const second = recorder(state)
    state.stage(Buffer.from('d'))
    state.drain()
    expect(first.seen.join('')).toBe('abcd')
    expect(second.seen.join('')).toBe('d')
    state.stage(Buffer.from('e'))
    second.detach()
    expect(second.seen.join('')).toBe('de')
    state.stage(Buffer.from('f'))
    state.adopt('f'.repeat(40), 100)
    expect(first.seen.join('')).toBe('abcdef')
    expect(state.masterReplOffset).toBe(100)
  })

  it('keeps a turn larger than its room whole, and counts without sinks', () => {
    const state = new ReplicationState()
    state.stage(Buffer.alloc(10))
    expect(state.masterReplOffset).toBe(10)
    const { seen } = recorder(state)
    const big = Buffer.alloc(100_000, 'x')
    state.stage(Buffer.from('<'))
    state.stage(big)
    state.stage(Buffer.from('>'))
    state.drain()
    expect(seen).toEqual([`<${'x'.repeat(100_000)}>`])
    expect(state.masterReplOffset).toBe(10 + 100_002)
  })
})
