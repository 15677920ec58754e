/**
 * The CLUSTER NODES line of a node, which nodes.conf also holds (redis 7.0 cluster.c
 * clusterGenNodeDescription): `<id> <ip>:<port>@<cport> <flags> <master|-> <ping-sent>
 * <pong-recv> <config-epoch> <connected|disconnected> <slot ranges...>`, and its parser, which
 * the pull of a peer's CLUSTER NODES and the load of nodes.conf share.
 */
import { parseSlotToken, type SlotToken } from './slot-ranges.js'
import { isNodeId, type NodeRole } from './cluster-node.js'

/** One parsed line. */
export interface NodeLine {
  readonly id: string
  readonly ip: string
  readonly port: number
  readonly cport: number
  readonly myself: boolean
  readonly role: NodeRole
  readonly masterId: string | undefined
  readonly pfail: boolean
  readonly fail: boolean
  readonly noaddr: boolean
  readonly handshake: boolean
  readonly pingSentMs: number
  readonly pongReceivedMs: number
  readonly configEpoch: number
  readonly connected: boolean
  readonly slots: readonly SlotToken[]
}

/** `ip:port@cport[,hostname]`; the ip may be IPv6 (colons), so the port follows the last colon. */
function parseAddress(text: string): { ip: string; port: number; cport: number } | undefined {
  const comma = text.indexOf(',')
  const address = comma === -1 ? text : text.slice(0, comma)
  const at = address.indexOf('@')
  const hostPort = at === -1 ? address : address.slice(0, at)
  const colon = hostPort.lastIndexOf(':')
  if (colon === -1) return undefined
  const port = Number(hostPort.slice(colon + 1))
  const cport = at === -1 ? port + 10000 : Number(address.slice(at + 1))
  if (!Number.isInteger(port) || !Number.isInteger(cport) || port < 0 || port > 65535) return undefined
  return { ip: hostPort.slice(0, colon), port, cport }
}

/** Parses one line; undefined when it is not a node line (a `vars` line, garbage). */
export function parseNodeLine(line: string): NodeLine | undefined {
  const fields = line
    .trim()
    .split(' ')
    .filter((field) => field !== '')
  if (fields.length < 8 || !isNodeId(fields[0]!)) return undefined
  const address = parseAddress(fields[1]!)
  if (address === undefined) return undefined
  const flags = new Set(fields[2]!.split(','))
  const slots: SlotToken[] = []
  for (const token of fields.slice(8)) {
    const parsed = parseSlotToken(token)
    if (parsed === undefined) return undefined
    slots.push(parsed)
  }
  const master = fields[3]!
  return {
    id: fields[0]!,
    ...address,
    myself: flags.has('myself'),
    role: flags.has('slave') ? 'replica' : 'master',
    masterId: isNodeId(master) ? master : undefined,
    pfail: flags.has('fail?'),
    fail: flags.has('fail'),
    noaddr: flags.has('noaddr'),
    handshake: flags.has('handshake'),
    pingSentMs: Number(fields[4]) || 0,
    pongReceivedMs: Number(fields[5]) || 0,
    configEpoch: Number(fields[6]) || 0,
    connected: fields[7] === 'connected',
    slots,
  }
}

/** Every node line of a CLUSTER NODES reply or nodes.conf. */
export function parseNodeLines(text: string): NodeLine[] {
  const lines: NodeLine[] = []
  for (const line of text.split('\n')) {
    const parsed = parseNodeLine(line)
    if (parsed !== undefined) lines.push(parsed)
  }
  return lines
}
