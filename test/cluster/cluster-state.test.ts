/**
 * The cluster state's rules (src/cluster/): slot ranges as CLUSTER NODES prints them, the parse of
 * a NODES line, the merge of a pulled CLUSTER NODES (claims only from the sender's own line, the
 * config-epoch rule, the collision rule, a master that lost its slots following the winner, the
 * FORGET blacklist), nodes.conf across a restart, and failure marking. The state runs on a real
 * directory; the replication link is a recorder of what the state asked of it.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ClusterState, type ClusterHost } from '../../src/cluster/cluster-state.js'
import { mergeNodes } from '../../src/cluster/cluster-merge.js'
import { parseNodeLine, parseNodeLines } from '../../src/cluster/nodes-line.js'
import { parseSlotToken, rangeToken, slotRanges } from '../../src/cluster/slot-ranges.js'
import { describeNodes } from '../../src/cluster/nodes-conf.js'
import { failureReportCount, markFailures, updateState } from '../../src/cluster/cluster-health.js'
import { DEFAULT_CONFIG, type Config } from '../../src/runtime/config.js'
import type { ReplicaLink } from '../../src/replication/replica-link.js'
import type { ReplicationState } from '../../src/replication/replication-state.js'
import { tempDirsRemovedAfterEach } from '../helpers/temp-dir.js'

const tempDir = tempDirsRemovedAfterEach('bfs-cluster-')

const A = 'a'.repeat(40)
const B = 'b'.repeat(40)
const C = 'c'.repeat(40)
const silent = { debug() {}, verbose() {}, notice() {}, warning() {} }

/** A state in a fresh directory (or `dir`), with the replication calls it made recorded in `links`. */
function stateIn(dir = tempDir(), config: Partial<Config> = {}) {
  const links: string[] = []
  const replicaLink = {
    setMaster: (host: string, port: number) => links.push(`${host}:${port}`),
    unsetMaster: () => links.push('no one'),
  } as unknown as ReplicaLink
  const host: ClusterHost = {
    config: { ...DEFAULT_CONFIG, dir, 'cluster-enabled': true, ...config },
    log: silent,
    replicaLink,
    replication: { role: 'master' } as ReplicationState,
    keyCount: () => 0,
    countKeysInSlot: () => 0,
    listeningPort: () => 7000,
    plaintextPort: () => 6000,
    emptyData: () => {},
  }
  const state = new ClusterState(host)
  return { state, links, dir }
}

/** A NODES line. */
function line(id: string, port: number, flags: string, epoch: number, slots = '', master = '-'): string {
  return `${id} 127.0.0.1:${port}@${port + 10000} ${flags} ${master} 0 0 ${epoch} connected${slots === '' ? '' : ` ${slots}`}`
}

/** Merges a reply from the peer on `port`. */
function merge(state: ClusterState, port: number, ...lines: string[]) {
  return mergeNodes(state, '127.0.0.1', port, parseNodeLines(lines.join('\n') + '\n'))
}

describe('slot ranges and NODES lines', () => {
  it('prints maximal ranges, a lone slot as itself', () => {
    const owned = new Set([0, 1, 2, 5, 16383])
    expect(slotRanges((slot) => owned.has(slot)).map(rangeToken)).toEqual(['0-2', '5', '16383'])
  })

  it('parses ranges and open-slot markers, and refuses what is no slot', () => {
    expect(parseSlotToken('10-20')).toEqual({ kind: 'range', start: 10, end: 20 })
    expect(parseSlotToken(`[7->-${A}]`)).toEqual({ kind: 'migrating', slot: 7, nodeId: A })
    expect(parseSlotToken(`[7-<-${A}]`)).toEqual({ kind: 'importing', slot: 7, nodeId: A })
    expect(parseSlotToken('16384')).toBeUndefined()
    expect(parseSlotToken('20-10')).toBeUndefined()
  })

  it('reads a redis 7.0 line, an IPv6 address and a hostname included', () => {
    const parsed = parseNodeLine(`${A} ::1:7001@17001,host.example myself,master - 0 1795305521000 3 connected 0-5460`)!
    expect(parsed).toMatchObject({
      id: A,
      ip: '::1',
      port: 7001,
      cport: 17001,
      myself: true,
      role: 'master',
      configEpoch: 3,
    })
    expect(parsed.slots).toEqual([{ kind: 'range', start: 0, end: 5460 }])
    expect(parseNodeLine(`${B} 127.0.0.1:7002@17002 slave ${A} 0 0 3 disconnected`)).toMatchObject({
      role: 'replica',
      masterId: A,
      connected: false,
    })
    expect(parseNodeLine('vars currentEpoch 6 lastVoteEpoch 0')).toBeUndefined()
  })
})

describe('merging a pulled CLUSTER NODES', () => {
  it('adds the sender and the ids it knows, and takes slot claims only from its own line', () => {
    const { state } = stateIn()
    const result = merge(state, 7001, line(A, 7001, 'myself,master', 1, '0-99'), line(B, 7002, 'master', 2, '100-199'))
    expect(result.sender?.id).toBe(A)
    expect(result.listsMe).toBe(false)
    expect(state.nodeById(B)).toBeDefined()
    expect(state.slotOwner(50)?.id).toBe(A)
    // B's claim was hearsay: B's own line (when pulled from B) is what gives B its slots.
    expect(state.slotOwner(150)).toBeUndefined()
    merge(state, 7002, line(B, 7002, 'myself,master', 2, '100-199'))
    expect(state.slotOwner(150)?.id).toBe(B)
  })

  it('a claim wins over an owner with a smaller epoch only, and never a slot being imported', () => {
    const { state } = stateIn()
    merge(state, 7001, line(A, 7001, 'myself,master', 5, '0-9'))
    merge(state, 7002, line(B, 7002, 'myself,master', 3, '0-9'))
    expect(state.slotOwner(0)?.id).toBe(A)
    state.importingFrom.set(9, state.nodeById(A)!)
    merge(state, 7002, line(B, 7002, 'myself,master', 6, '0-9'))
    expect(state.slotOwner(0)?.id).toBe(B)
    expect(state.slotOwner(9)?.id).toBe(A)
    expect(state.currentEpoch).toBe(6)
  })

  it('of two masters with one epoch, the one with the smaller id takes a new epoch', () => {
    const { state } = stateIn()
    state.myself.configEpoch = 4
    state.currentEpoch = 4
    const bigger = 'f'.repeat(40)
    merge(state, 7001, line(bigger, 7001, 'myself,master', 4))
    expect(state.myself.id < bigger).toBe(true)
    expect(state.myself.configEpoch).toBe(5)
    expect(state.currentEpoch).toBe(5)
  })

  it('a master whose slots all went to a higher epoch becomes a replica of the winner', () => {
    const { state, links } = stateIn()
    state.myself.configEpoch = 1
    for (let slot = 0; slot < 10; slot++) state.setSlotOwner(slot, state.myself)
    merge(state, 7001, line(A, 7001, 'myself,master', 2, '0-9'))
    expect(state.myself.role).toBe('replica')
    expect(state.myself.masterId).toBe(A)
    expect(links).toEqual(['127.0.0.1:7001'])
  })

  it('a forgotten node is not re-added by gossip while blacklisted', () => {
    const { state } = stateIn()
    merge(state, 7001, line(A, 7001, 'myself,master', 1), line(B, 7002, 'master', 2))
    state.forget(state.nodeById(B)!)
    merge(state, 7001, line(A, 7001, 'myself,master', 1), line(B, 7002, 'master', 2))
    expect(state.nodeById(B)).toBeUndefined()
    merge(state, 7001, line(A, 7001, 'myself,master', 1), line(C, 7003, 'master', 3))
    expect(state.nodeById(C)).toBeDefined()
  })
})

describe('nodes.conf', () => {
  it('a restarted node reads back its id, epochs, peers, slots and open slots', async () => {
    const { state, dir } = stateIn()
    state.myself.configEpoch = 7
    state.currentEpoch = 9
    for (let slot = 100; slot <= 200; slot++) state.setSlotOwner(slot, state.myself)
    merge(state, 7001, line(A, 7001, 'myself,master', 3, '0-99'))
    state.migratingTo.set(150, state.nodeById(A)!)
    state.saveConfig()
    expect(readFileSync(path.join(dir, 'nodes.conf'), 'utf8')).toMatch(/\nvars currentEpoch 9 lastVoteEpoch 0\n$/)
    const again = stateIn(dir).state
    expect(again.myself.id).toBe(state.myself.id)
    expect(again.myself.configEpoch).toBe(7)
    expect(again.currentEpoch).toBe(9)
    expect(again.slotOwner(150)).toBe(again.myself)
    expect(again.slotOwner(50)?.id).toBe(A)
    expect(again.migratingTo.get(150)?.id).toBe(A)
    expect(describeNodes(again)).toContain(` myself,master - 0 0 7 connected 100-200 [150->-${A}]`)
  })
})

describe('failures and the cluster state', () => {
  it('a silent peer is fail? after the node timeout, fail once a majority of masters reports it', () => {
    const { state } = stateIn(undefined, { 'cluster-node-timeout': 1000 })
    for (let slot = 0; slot < 16384; slot++) state.setSlotOwner(slot, state.myself)
    merge(state, 7001, line(A, 7001, 'myself,master', 1))
    merge(state, 7002, line(B, 7002, 'myself,master', 2))
    const c = state.addNode(C, '127.0.0.1', 7003, 17003, 0)!
    for (let slot = 0; slot < 3; slot++) state.setSlotOwner(slot, state.nodeById(slot === 0 ? A : slot === 1 ? B : C))
    updateState(state)
    expect(state.size).toBe(4)
    markFailures(state, Date.now())
    expect(c.pfail).toBe(true)
    expect(c.fail).toBe(false)
    // A reports it too: myself and A are 2 of 4 masters, short of 3.
    merge(state, 7001, line(A, 7001, 'myself,master', 1, '0'), line(C, 7003, 'master,fail?', 3))
    markFailures(state, Date.now())
    expect(failureReportCount(state, c)).toBe(1)
    expect(c.fail).toBe(false)
    merge(state, 7002, line(B, 7002, 'myself,master', 2, '1'), line(C, 7003, 'master,fail?', 3))
    markFailures(state, Date.now())
    expect(c.fail).toBe(true)
    expect(c.pfail).toBe(false)
    updateState(state)
    expect(state.state).toBe('fail')
  })

  it('the state is fail while a slot is unowned (with require-full-coverage), ok once covered', () => {
    const { state } = stateIn()
    for (let slot = 1; slot < 16384; slot++) state.setSlotOwner(slot, state.myself)
    updateState(state)
    expect(state.state).toBe('fail')
    state.setSlotOwner(0, state.myself)
    updateState(state)
    expect(state.state).toBe('ok')
  })
})

describe('the announced ports (redis 7.0 deriveAnnouncedPorts)', () => {
  const announced = (config: Partial<Config>) => {
    const { myself } = stateIn(undefined, config).state
    return [myself.port, myself.pport, myself.cport]
  }

  it('are the bound ports, or cluster-announce-port and -bus-port', () => {
    expect(announced({})).toEqual([7000, 0, 17000])
    expect(announced({ 'cluster-announce-port': 7100, 'cluster-announce-bus-port': 7200 })).toEqual([7100, 0, 7200])
    // Without tls-cluster the TLS announce key does nothing.
    expect(announced({ 'cluster-announce-tls-port': 7300 })).toEqual([7000, 0, 17000])
  })

  it('under tls-cluster: the TLS port and the plaintext one, or cluster-announce-tls-port and cluster-announce-port', () => {
    expect(announced({ 'tls-cluster': true })).toEqual([7000, 6000, 17000])
    expect(announced({ 'tls-cluster': true, 'cluster-announce-port': 7100 })).toEqual([7100, 6000, 17100])
    expect(
      announced({ 'tls-cluster': true, 'cluster-announce-tls-port': 7300, 'cluster-announce-port': 7100 }),
    ).toEqual([7300, 7100, 17300])
    expect(announced({ 'tls-cluster': true, 'cluster-announce-tls-port': 7300 })).toEqual([7300, 0, 17300])
  })
})
