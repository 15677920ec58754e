/**
 * The replica's handshake with its master (redis replication.c syncWithMaster), in order: PING and
 * its reply; then AUTH (with masterauth), REPLCONF listening-port, REPLCONF ip-address (only with
 * replica-announce-ip) and REPLCONF capa eof capa psync2 written back to back, their replies read
 * in that order; then PSYNC, answered +FULLRESYNC, +CONTINUE or an error. Empty lines (the
 * master's `\n` keep-alives) are skipped throughout.
 */
import type { ReplicaLinkHost } from './replica-host.js'
import { encodeCommand } from '../protocol/command-encoder.js'

export type HandshakeOutcome =
  | { kind: 'full'; replid: string; offset: number; rest: Buffer }
  | { kind: 'continue'; replid: string | undefined; rest: Buffer }
  | { kind: 'retry'; reason: string }

type Step = 'ping' | 'auth' | 'port' | 'ip' | 'capa' | 'psync'

/** The longest reply line awaited. */
const MAX_LINE_BYTES = 64 * 1024

export class Handshake {
  private buffered: Buffer = Buffer.alloc(0)
  private readonly steps: Step[] = ['ping']

  constructor(
    private readonly host: Pick<ReplicaLinkHost, 'config' | 'log' | 'ownPort'>,
    private readonly psync: readonly [string, string],
    private readonly write: (bytes: Buffer) => void,
  ) {
    write(encodeCommand(['PING']))
  }

  /** A read's bytes: undefined while the handshake goes on, its outcome once PSYNC is answered (or it failed). */
  push(chunk: Buffer): HandshakeOutcome | undefined {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk])
    for (;;) {
      const lf = this.buffered.indexOf(0x0a)
      if (lf < 0) {
        if (this.buffered.length > MAX_LINE_BYTES)
          return { kind: 'retry', reason: 'Too long a reply line from the master' }
        return undefined
      }
      const line = this.buffered.toString('latin1', 0, lf).replace(/\r$/, '')
      this.buffered = this.buffered.subarray(lf + 1)
      if (line === '') continue
      const outcome = this.reply(this.steps.shift()!, line)
      if (outcome !== undefined) return outcome
    }
  }

  private reply(step: Step, line: string): HandshakeOutcome | undefined {
    const error = line.startsWith('-')
    switch (step) {
      case 'ping':
        if (error && !/^-(NOAUTH|NOPERM|ERR operation not permitted)/.test(line))
          return { kind: 'retry', reason: `Error reply to PING from master: '${line}'` }
        this.host.log.notice('Master replied to PING, replication can continue...')
        this.sendReplconf()
        return undefined
      case 'auth':
        return error ? { kind: 'retry', reason: `Unable to AUTH to MASTER: ${line}` } : undefined
      case 'port':
      case 'ip':
      case 'capa':
        if (error)
          this.host.log.notice(
            `(Non critical) Master does not understand REPLCONF ${step === 'port' ? 'listening-port' : step === 'ip' ? 'ip-address' : 'capa'}: ${line}`,
          )
        if (step === 'capa') {
          this.steps.push('psync')
          this.write(encodeCommand(['PSYNC', ...this.psync]))
          this.host.log.notice(`Trying a partial resynchronization (request ${this.psync[0]}:${this.psync[1]}).`)
        }
        return undefined
      case 'psync':
        return this.psyncReply(line)
    }
  }

  private sendReplconf(): void {
    const config = this.host.config
    const parts: Buffer[] = []
    if (config.masterauth !== '') {
      const credentials = config.masteruser !== '' ? [config.masteruser, config.masterauth] : [config.masterauth]
      parts.push(encodeCommand(['AUTH', ...credentials]))
      this.steps.push('auth')
    }
    const port = config['replica-announce-port'] !== 0 ? config['replica-announce-port'] : this.host.ownPort()
    parts.push(encodeCommand(['REPLCONF', 'listening-port', String(port)]))
    this.steps.push('port')
    if (config['replica-announce-ip'] !== '') {
      parts.push(encodeCommand(['REPLCONF', 'ip-address', config['replica-announce-ip']]))
      this.steps.push('ip')
    }
    parts.push(encodeCommand(['REPLCONF', 'capa', 'eof', 'capa', 'psync2']))
    this.steps.push('capa')
    this.write(Buffer.concat(parts))
  }

  /** redis slaveTryPartialResynchronization's reading of the reply. */
  private psyncReply(line: string): HandshakeOutcome {
    const rest = this.buffered
    const full = /^\+FULLRESYNC ([0-9a-zA-Z]{40}) (\d{1,19})$/.exec(line)
    if (full) return { kind: 'full', replid: full[1]!, offset: Number(full[2]), rest }
    if (line.startsWith('+FULLRESYNC'))
      return { kind: 'retry', reason: `Master replied with wrong +FULLRESYNC syntax: ${line}` }
    const resumed = /^\+CONTINUE(?: ([0-9a-zA-Z]{40}))?\s*$/.exec(line)
    if (resumed) return { kind: 'continue', replid: resumed[1], rest }
    if (/^-(NOMASTERLINK|LOADING)/.test(line))
      return { kind: 'retry', reason: `Master is currently unable to PSYNC but should be in the future: ${line}` }
    return { kind: 'retry', reason: `Unexpected reply to PSYNC from master: ${line}` }
  }
}
