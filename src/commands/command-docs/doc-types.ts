/**
 * The documentation COMMAND DOCS serves for one command, field for field as redis 7.0
 * addReplyCommandDocs writes it (src/server.c), and for one argument as addReplyCommandArgList
 * writes it. The field names are the wire's; a field left out is not sent.
 */

/** One argument of a command, or of a `block` / `oneof` argument. */
export interface ArgumentDoc {
  readonly name: string
  /** key, string, integer, double, pattern, unix-time, pure-token, oneof, block. */
  readonly type: string
  readonly key_spec_index?: number
  readonly token?: string
  readonly summary?: string
  readonly since?: string
  readonly deprecated_since?: string
  /** optional, multiple, multiple_token. */
  readonly flags?: readonly string[]
  /** A `block`'s or a `oneof`'s own arguments. */
  readonly arguments?: readonly ArgumentDoc[]
}

/**
 * A command's (or a subcommand's) documentation. summary, since and group may be left out where
 * the command table's row gives them; a container's subcommands come from its rows.
 */
export interface CommandDoc {
  readonly summary?: string
  readonly since?: string
  readonly group?: string
  readonly complexity?: string
  /** deprecated, syscmd. */
  readonly doc_flags?: readonly string[]
  readonly deprecated_since?: string
  readonly replaced_by?: string
  /** [version, what changed] */
  readonly history?: readonly (readonly [string, string])[]
  readonly arguments?: readonly ArgumentDoc[]
}
