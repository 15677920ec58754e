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

/** A begin_search or find_keys part of a key spec: its type and its spec's integers or keyword. */
export interface KeySpecPart {
  /** index, keyword, range, keynum, unknown. */
  readonly type: string
  readonly spec: Readonly<Record<string, number | string>>
}

/** One of COMMAND INFO's key specs, as redis 7.0 addReplyCommandKeySpecs writes it. */
export interface KeySpec {
  readonly notes?: string
  /** RO, RW, OW, RM, access, update, insert, delete, not_key, incomplete, variable_flags. */
  readonly flags: readonly string[]
  readonly begin_search: KeySpecPart
  readonly find_keys: KeySpecPart
}

/**
 * A command's (or a subcommand's) documentation, and COMMAND INFO's tips and key specs. summary, since and group may be left out where
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
  /** COMMAND INFO's tips (`nondeterministic_output`, `request_policy:all_shards`, ...). */
  readonly tips?: readonly string[]
  /** COMMAND INFO's key specs. */
  readonly key_specs?: readonly KeySpec[]
}
