/**
 * How a bfs command-line tool starts and ends: its exit statuses, the error that means "nothing
 * could be done" (exit 2), and the one `main` that reads the arguments, prints the usage or runs.
 */

/** The port bfs listens on by default (Redis's is 6379): the tools' default too. */
export const BFS_DEFAULT_PORT = 6381

/** Exit status: everything asked for was done. */
export const EXIT_OK = 0
/** Exit status: the tool ran but some of the work failed. */
export const EXIT_FAILED = 1
/** Exit status: bad usage, or an input or server the tool cannot use (a {@link SetupError}). */
export const EXIT_USAGE = 2

/** Bad usage, an unreadable input, or an endpoint that cannot be used: the tool exits with {@link EXIT_USAGE}. */
export class SetupError extends Error {}

/** The message of an Error, or any other thrown value as a string. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** What {@link runCli} needs to know about one tool. */
export interface CliSpec<Options> {
  /** Program name, the prefix of every message (`bfs-copy: ...`). */
  name: string
  /** The text printed for `--help` (to standard output) and after a usage error (to standard error). */
  usage: string
  /** The parsed options, or 'help' for -h/--help; throws on bad usage. */
  parseArgs(args: readonly string[]): Options | 'help'
  /** Does the work and resolves with the exit status; a {@link SetupError} becomes {@link EXIT_USAGE}. */
  run(options: Options): Promise<number>
}

async function main<Options>(spec: CliSpec<Options>): Promise<number> {
  let options: Options | 'help'
  try {
    options = spec.parseArgs(process.argv.slice(2))
  } catch (error) {
    process.stderr.write(`${spec.name}: ${errorText(error)}\n\n${spec.usage}`)
    return EXIT_USAGE
  }
  if (options === 'help') {
    process.stdout.write(spec.usage)
    return EXIT_OK
  }
  try {
    return await spec.run(options)
  } catch (error) {
    process.stderr.write(`${spec.name}: ${errorText(error)}\n`)
    return error instanceof SetupError ? EXIT_USAGE : EXIT_FAILED
  }
}

/**
 * Runs a tool on `process.argv` and sets `process.exitCode` (never calls `process.exit`, so pending
 * output is flushed): usage errors print the message and the usage and exit {@link EXIT_USAGE};
 * `--help` prints the usage and exits {@link EXIT_OK}; otherwise the exit status is what `run`
 * resolves with, or {@link EXIT_USAGE} / {@link EXIT_FAILED} when it throws.
 */
export function runCli<Options>(spec: CliSpec<Options>): void {
  main(spec).then(
    (code) => {
      process.exitCode = code
    },
    (error: unknown) => {
      // Only a failure while reporting another one lands here: say where it came from.
      process.stderr.write(`${spec.name}: ${(error as Error)?.stack ?? String(error)}\n`)
      process.exitCode = EXIT_FAILED
    },
  )
}
