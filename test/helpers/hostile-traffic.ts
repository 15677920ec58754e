/**
 * Seeded hostile clients for the live-server fuzz and soak tests: random bytes, valid commands
 * with random arguments, half-written frames and abrupt disconnects, each split into writes at
 * random points. The same seed gives the same traffic.
 */
import net from 'node:net'
import { cutAt } from './cut-bytes.js'
import { encodeCommand } from './resp.js'

type Random = () => number

const int = (random: Random, below: number): number => Math.floor(random() * below)
const pick = <T>(random: Random, items: readonly T[]): T => items[int(random, items.length)]!

function randomBytes(random: Random, length: number): Buffer {
  const bytes = Buffer.allocUnsafe(length)
  for (let i = 0; i < length; i++) bytes[i] = int(random, 256)
  return bytes
}

/** An argument: a number-ish word, a keyword, or random bytes. */
function randomArg(random: Random): Buffer | string {
  switch (int(random, 6)) {
    case 0:
      return String(int(random, 3) === 0 ? -int(random, 1e6) : int(random, 1e9))
    case 1:
      return pick(random, ['0.01', '0.5', '1', '0', '-1', '1e-300', 'nan', 'inf', '0.0001', '99999999999999999999'])
    case 2:
      return pick(random, [
        'CAPACITY',
        'ERROR',
        'EXPANSION',
        'NONSCALING',
        'NOCREATE',
        'ITEMS',
        'AUTH',
        'SETNAME',
        'SIZE',
        'FILTERS',
      ])
    case 3:
      return `fz:${int(random, 50)}`
    default:
      return randomBytes(random, int(random, 40))
  }
}

/**
 * Commands the fuzz may send. Keys are always `fz:*`, so a filter under any other name is never
 * touched; commands that stop or wipe the server are left out (and renamed away by the tests).
 */
const COMMANDS = [
  'PING',
  'ECHO',
  'BF.ADD',
  'BF.MADD',
  'BF.EXISTS',
  'BF.MEXISTS',
  'BF.INSERT',
  'BF.INFO',
  'BF.CARD',
  'BF.RESERVE',
  'EXISTS',
  'TYPE',
  'SCAN',
  'DBSIZE',
  'INFO',
  'HELLO',
  'SELECT',
  'TIME',
  'COMMAND',
  'TTL',
  'MEMORY',
  'NOSUCHCOMMAND',
  'AUTH',
  'QUIT',
]

function randomCommand(random: Random): Buffer {
  const name = pick(random, COMMANDS)
  const args: (Buffer | string)[] = [int(random, 2) === 0 ? name : name.toLowerCase()]
  const keyed = name.startsWith('BF.') || name === 'EXISTS' || name === 'TYPE' || name === 'TTL'
  if (keyed) args.push(`fz:${int(random, 50)}`)
  const extra = int(random, 6)
  for (let i = 0; i < extra; i++) args.push(randomArg(random))
  if (int(random, 8) === 0)
    return Buffer.from(args.map((arg) => (typeof arg === 'string' ? arg : 'x')).join(' ') + '\r\n') // inline
  return encodeCommand(args)
}

export type SessionKind = 'random-bytes' | 'valid-commands' | 'half-frame' | 'abrupt'

export interface Session {
  kind: SessionKind
  /** The writes, in order. */
  writes: Buffer[]
  /** Destroy the socket right after writing (else end it and wait for the server to close). */
  abrupt: boolean
}

/** Splits bytes into 1..5 pieces at random points. */
function splitRandomly(random: Random, bytes: Buffer): Buffer[] {
  const cuts = new Set<number>()
  const pieces = int(random, 5)
  for (let i = 0; i < pieces && bytes.length > 1; i++) cuts.add(1 + int(random, bytes.length - 1))
  return cutAt(
    bytes,
    [...cuts].sort((a, b) => a - b),
  )
}

/** One hostile session. */
export function randomSession(random: Random): Session {
  const kind = pick<SessionKind>(random, ['random-bytes', 'valid-commands', 'half-frame', 'abrupt'])
  let bytes: Buffer
  let abrupt = false
  switch (kind) {
    case 'random-bytes':
      // Half of them start like a frame so the parser gets past the first byte.
      bytes = Buffer.concat([
        Buffer.from(pick(random, ['', '*', '$', '*3\r\n', '*1\r\n$'])),
        randomBytes(random, 1 + int(random, 2000)),
      ])
      abrupt = int(random, 2) === 0
      break
    case 'valid-commands':
      bytes = Buffer.concat(Array.from({ length: 1 + int(random, 20) }, () => randomCommand(random)))
      break
    case 'half-frame': {
      const whole = Buffer.concat(Array.from({ length: 1 + int(random, 4) }, () => randomCommand(random)))
      bytes = whole.subarray(0, 1 + int(random, whole.length - 1))
      abrupt = int(random, 2) === 0
      break
    }
    case 'abrupt':
      bytes = Buffer.concat(Array.from({ length: 1 + int(random, 50) }, () => randomCommand(random)))
      abrupt = true
      break
  }
  return { kind, writes: splitRandomly(random, bytes), abrupt }
}

/**
 * Plays a session against the server: connects, writes each piece on its own turn of the event
 * loop, then destroys the socket or ends it and waits (at most `waitMs`) for the server to close.
 * Never rejects: a reset by the server is part of the game.
 */
export function playSession(port: number, session: Session, waitMs = 3000): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' })
    let done = false
    const finish = (): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resolve()
    }
    const timer = setTimeout(finish, waitMs)
    socket.on('error', finish)
    socket.on('close', finish)
    socket.on('data', () => {})
    socket.once('connect', async () => {
      for (const piece of session.writes) {
        if (done) return
        socket.write(piece)
        await new Promise((next) => setImmediate(next))
      }
      if (session.abrupt) finish()
      else socket.end()
    })
  })
}

/** Runs `count` sessions, `concurrency` at a time; returns how many of each kind ran. */
export async function runSessions(
  port: number,
  random: Random,
  count: number,
  concurrency: number,
): Promise<Record<SessionKind, number>> {
  const kinds: Record<SessionKind, number> = { 'random-bytes': 0, 'valid-commands': 0, 'half-frame': 0, abrupt: 0 }
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < count) {
      next++
      const session = randomSession(random)
      kinds[session.kind]++
      await playSession(port, session)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return kinds
}
