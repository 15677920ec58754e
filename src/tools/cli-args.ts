/**
 * The command-line shape the bfs tools share: `--name value` or `--name=value`, flags without a
 * value, `-h`/`--help`, `--` before operands that start with '-', and '-' alone as an operand.
 */
import { readFileSync } from 'node:fs'
import type tls from 'node:tls'
import { SetupError } from './cli-main.js'

/**
 * Handles one option. `value()` takes the option's value (the text after '=', else the next
 * argument) and throws a {@link SetupError} when there is none; a flag simply never calls it.
 * `flag` is the option as written, without any `=value`, for error messages.
 */
export type OptionHandler = (value: () => string, flag: string) => void

/** A tool's options by spelling (`'-f'` and `'--filter'` may share a handler). */
export type OptionTable = Readonly<Record<string, OptionHandler>>

/**
 * Reads `args` left to right, calling the handler of each option in `options`.
 * Returns the operands in order, or 'help' at the first `-h` or `--help` (options before it have
 * been handled, those after it are not read). Throws a {@link SetupError} for an option that is
 * not in the table or lacks its value, and passes on what a handler throws.
 */
export function readArgs(args: readonly string[], options: OptionTable): string[] | 'help' {
  const operands: string[] = []
  for (let i = 0; i < args.length; i++) {
    let arg = args[i]!
    let inline: string | undefined
    const eq = arg.indexOf('=')
    if (arg.startsWith('--') && eq > 0) {
      inline = arg.slice(eq + 1)
      arg = arg.slice(0, eq)
    }
    const value = (): string => {
      if (inline !== undefined) return inline
      const next = args[++i]
      if (next === undefined) throw new SetupError(`${arg} needs a value`)
      return next
    }
    if (arg === '-h' || arg === '--help') return 'help'
    if (arg === '--') {
      operands.push(...args.slice(i + 1))
      break
    }
    if (Object.hasOwn(options, arg)) {
      options[arg]!(value, arg)
      continue
    }
    if (arg.startsWith('-') && arg !== '-') throw new SetupError(`unknown option ${arg}`)
    operands.push(arg)
  }
  return operands
}

/** redis-cli's TLS options as a tool reads them: --tls, and the files it connects with. */
export interface TlsArgs {
  tls: boolean
  cacert?: string
  cert?: string
  key?: string
}

/** The option handlers of {@link TlsArgs}, to spread into a tool's {@link OptionTable}. */
export function tlsOptionTable(into: TlsArgs): OptionTable {
  return {
    '--tls': () => {
      into.tls = true
    },
    '--cacert': (value) => {
      into.cacert = value()
    },
    '--cert': (value) => {
      into.cert = value()
    },
    '--key': (value) => {
      into.key = value()
    },
  }
}

/**
 * Node's TLS options for {@link TlsArgs}, the files read now; undefined without --tls. As
 * redis-cli: the server's certificate chain is checked against --cacert (else the system's CAs),
 * its host name is not, and --cert and --key go together.
 * @throws SetupError
 */
export function tlsConnectOptions(args: TlsArgs): tls.ConnectionOptions | undefined {
  if (!args.tls) {
    if (args.cacert !== undefined || args.cert !== undefined || args.key !== undefined)
      throw new SetupError('--cacert, --cert and --key need --tls')
    return undefined
  }
  if ((args.cert === undefined) !== (args.key === undefined)) throw new SetupError('--cert and --key go together')
  const read = (file: string, flag: string): Buffer => {
    try {
      return readFileSync(file)
    } catch (error) {
      throw new SetupError(`${flag}: cannot read '${file}': ${(error as Error).message}`)
    }
  }
  return {
    // redis-cli (hiredis) checks the chain, not the host name.
    checkServerIdentity: () => undefined,
    ...(args.cacert === undefined ? {} : { ca: read(args.cacert, '--cacert') }),
    ...(args.cert === undefined ? {} : { cert: read(args.cert, '--cert'), key: read(args.key!, '--key') }),
  }
}
