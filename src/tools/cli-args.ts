/**
 * The command-line shape the bfs tools share: `--name value` or `--name=value`, flags without a
 * value, `-h`/`--help`, `--` before operands that start with '-', and '-' alone as an operand.
 */
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
