/**
 * One ACL user and the rules that change it, as redis 7.0 acl.c ACLSetUser and ACLSetSelector
 * parse them (the texts of AclRuleError are ACLSetUserStringError's). Passwords are kept as
 * SHA-256 hex (ACLHashPassword) and compared in constant time. Selectors in parentheses are not
 * built: such a rule is refused.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { AclCommand, AclCommandSpace } from './acl-commands.js'
import { categoryName } from './acl-categories.js'

/** %R~ and %W~ (redis ACL_READ_PERMISSION, ACL_WRITE_PERMISSION); ~ is both. */
export const KEY_READ = 1
export const KEY_WRITE = 2
export const KEY_ALL = 3

export interface KeyPattern {
  readonly pattern: Buffer
  flags: number
}

/** A rule redis refuses: `message` is ACLSetUserStringError's text. */
export class AclRuleError extends Error {
  /** ENOENT (an unknown command or category), which ACL LOAD reports apart. */
  readonly unknownName: boolean
  constructor(message: string, unknownName = false) {
    super(message)
    this.unknownName = unknownName
  }
}

const UNKNOWN = 'Unknown command or category name in ACL'
const SYNTAX = 'Syntax error'
const AFTER_ALLKEYS = "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns"
const AFTER_ALLCHANNELS = "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels"
const NO_SUCH_PASSWORD = 'The password you are trying to remove from the user does not exist'
const BAD_HASH = 'The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters'
const SUBCOMMAND_FIRST_ARG = 'Allowing first-arg of a subcommand is not supported'

/** redis ACLHashPassword: SHA-256, lower-case hex. */
export function hashPassword(password: Uint8Array): string {
  return createHash('sha256').update(password).digest('hex')
}

/** redis ACLStringHasSpaces: a space (isspace) or a NUL byte. */
export function hasSpaces(bytes: Uint8Array): boolean {
  for (const c of bytes) if (c === 0 || c === 0x20 || (c >= 0x09 && c <= 0x0d)) return true
  return false
}

const isHash = (text: string): boolean => /^[0-9a-f]{64}$/.test(text)

export class AclUser {
  /** redis USER_FLAG_ENABLED / USER_FLAG_DISABLED: a new user is off. */
  enabled = false
  nopass = false
  /** redis's sanitize-payload flags: shown once set, no effect in bfs (no RESTORE payloads). */
  sanitize: '' | 'sanitize-payload' | 'skip-sanitize-payload' = ''
  passwords: string[] = []
  allKeys = false
  keys: KeyPattern[] = []
  allChannels = false
  channels: Buffer[] = []
  /** redis SELECTOR_FLAG_ALLCOMMANDS: every command runs without looking at `allowed`. */
  allCommands = false
  /** The reserved bit +@all sets and -@all clears: commands added later are allowed too. */
  futureCommands = false
  /** Allowed commands and subcommands by full name. */
  allowed = new Set<string>()
  /** `+select|0`: first arguments allowed for a command otherwise denied (lower case). */
  firstArgs = new Map<string, string[]>()

  constructor(readonly name: string) {}

  /** A copy under another name (redis ACLCopyUser), to stage changes on. */
  copy(name = this.name): AclUser {
    const user = new AclUser(name)
    Object.assign(user, this, { name })
    user.passwords = [...this.passwords]
    user.keys = this.keys.map((key) => ({ ...key }))
    user.channels = [...this.channels]
    user.allowed = new Set(this.allowed)
    user.firstArgs = new Map([...this.firstArgs].map(([command, args]) => [command, [...args]]))
    return user
  }

  /** Whether nothing is checked for it: every command, key and channel. */
  get unrestricted(): boolean {
    return this.allCommands && this.allKeys && this.allChannels
  }

  /** Whether `password` is one of its passwords (or it has nopass), comparing hashes in constant time. */
  passwordMatches(password: Uint8Array): boolean {
    if (this.nopass) return true
    const given = Buffer.from(hashPassword(password), 'latin1')
    let found = false
    for (const stored of this.passwords) if (timingSafeEqual(given, Buffer.from(stored, 'latin1'))) found = true
    return found
  }

  /** Applies one rule (redis ACLSetUser); throws AclRuleError. `allChannelsByDefault`: acl-pubsub-default. */
  apply(op: Buffer, space: AclCommandSpace, allChannelsByDefault: boolean): void {
    if (op.length === 0) return
    const word = op.toString('latin1')
    const lower = word.toLowerCase()
    if (lower === 'on' || lower === 'off') this.enabled = lower === 'on'
    else if (lower === 'sanitize-payload' || lower === 'skip-sanitize-payload') this.sanitize = lower
    else if (lower === 'nopass' || lower === 'resetpass') {
      this.nopass = lower === 'nopass'
      this.passwords = []
    } else if (word[0] === '>' || word[0] === '#') this.addPassword(op, word)
    else if (word[0] === '<' || word[0] === '!') this.removePassword(op, word)
    else if (word[0] === '(' && word.endsWith(')')) throw new AclRuleError(SYNTAX) // selectors: not built
    else if (lower === 'clearselectors') return
    else if (lower === 'reset') this.reset(space, allChannelsByDefault)
    else this.applySelectorRule(op, word, space)
  }

  private addPassword(op: Buffer, word: string): void {
    const hash = word[0] === '>' ? hashPassword(op.subarray(1)) : word.slice(1)
    if (word[0] === '#' && !isHash(hash)) throw new AclRuleError(BAD_HASH)
    if (!this.passwords.includes(hash)) this.passwords.push(hash)
    this.nopass = false
  }

  private removePassword(op: Buffer, word: string): void {
    const hash = word[0] === '<' ? hashPassword(op.subarray(1)) : word.slice(1)
    if (word[0] === '!' && !isHash(hash)) throw new AclRuleError(BAD_HASH)
    const index = this.passwords.indexOf(hash)
    if (index < 0) throw new AclRuleError(NO_SUCH_PASSWORD)
    this.passwords.splice(index, 1)
  }

  /** redis `reset`: resetpass, resetkeys, resetchannels (allchannels by acl-pubsub-default), off, -@all. */
  private reset(space: AclCommandSpace, allChannelsByDefault: boolean): void {
    this.nopass = false
    this.passwords = []
    this.allKeys = false
    this.keys = []
    this.allChannels = allChannelsByDefault
    this.channels = []
    this.enabled = false
    this.sanitize = 'sanitize-payload'
    this.setAllCommands(false, space)
  }

  /** +@all / -@all (allcommands / nocommands). */
  setAllCommands(value: boolean, space: AclCommandSpace): void {
    this.allowed = value ? new Set(space.all.map((command) => command.fullName)) : new Set()
    this.allCommands = value
    this.futureCommands = value
    this.firstArgs.clear()
  }

  /** redis ACLSetSelector: keys, channels and commands. */
  private applySelectorRule(op: Buffer, word: string, space: AclCommandSpace): void {
    const lower = word.toLowerCase()
    if (lower === 'allkeys' || lower === '~*') {
      this.allKeys = true
      this.keys = []
    } else if (lower === 'resetkeys') {
      this.allKeys = false
      this.keys = []
    } else if (lower === 'allchannels' || lower === '&*') {
      this.allChannels = true
      this.channels = []
    } else if (lower === 'resetchannels') {
      this.allChannels = false
      this.channels = []
    } else if (lower === 'allcommands' || lower === '+@all') this.setAllCommands(true, space)
    else if (lower === 'nocommands' || lower === '-@all') this.setAllCommands(false, space)
    else if (word[0] === '~' || word[0] === '%') this.addKeyPattern(op, word)
    else if (word[0] === '&') this.addChannel(op)
    else if ((word[0] === '+' || word[0] === '-') && word[1] === '@') this.applyCategory(word, space)
    else if (word[0] === '+') this.allowCommand(word.slice(1), space)
    else if (word[0] === '-') this.changeCommand(this.commandNamed(word.slice(1), space), false)
    else throw new AclRuleError(SYNTAX)
  }

  private addKeyPattern(op: Buffer, word: string): void {
    if (this.allKeys) throw new AclRuleError(AFTER_ALLKEYS)
    let flags = KEY_ALL
    let offset = 1
    if (word[0] === '%') {
      flags = 0
      for (; offset < word.length; offset++) {
        const c = word[offset]!.toUpperCase()
        if (c === 'R' && (flags & KEY_READ) === 0) flags |= KEY_READ
        else if (c === 'W' && (flags & KEY_WRITE) === 0) flags |= KEY_WRITE
        else if (c === '~') {
          offset++
          break
        } else throw new AclRuleError(SYNTAX)
      }
    }
    const pattern = op.subarray(offset)
    if (hasSpaces(pattern)) throw new AclRuleError(SYNTAX)
    const same = this.keys.find((key) => key.pattern.equals(pattern))
    if (same !== undefined) same.flags |= flags
    else this.keys.push({ pattern: Buffer.from(pattern), flags })
  }

  private addChannel(op: Buffer): void {
    if (this.allChannels) throw new AclRuleError(AFTER_ALLCHANNELS)
    const pattern = op.subarray(1)
    if (hasSpaces(pattern)) throw new AclRuleError(SYNTAX)
    if (!this.channels.some((channel) => channel.equals(pattern))) this.channels.push(Buffer.from(pattern))
  }

  private applyCategory(word: string, space: AclCommandSpace): void {
    const category = categoryName(word.slice(2))
    if (category === undefined) throw new AclRuleError(UNKNOWN, true)
    for (const command of space.all) if (command.categories.has(category)) this.changeCommand(command, word[0] === '+')
  }

  private commandNamed(name: string, space: AclCommandSpace): AclCommand {
    const command = space.lookup(name)
    if (command === undefined) throw new AclRuleError(UNKNOWN, true)
    return command
  }

  /** `+cmd`, `+container|sub`, or `+cmd|firstarg` for a command without subcommands. */
  private allowCommand(name: string, space: AclCommandSpace): void {
    const bar = name.lastIndexOf('|')
    if (bar < 0) return this.changeCommand(this.commandNamed(name, space), true)
    const command = this.commandNamed(name.slice(0, bar), space)
    const sub = name.slice(bar + 1)
    if (command.parent !== undefined) throw new AclRuleError(SUBCOMMAND_FIRST_ARG)
    if (sub === '') throw new AclRuleError(SYNTAX)
    if (command.subcommands.length > 0) return this.changeCommand(this.commandNamed(name, space), true)
    const args = this.firstArgs.get(command.fullName) ?? []
    if (!args.some((arg) => arg.toLowerCase() === sub.toLowerCase())) args.push(sub)
    this.firstArgs.set(command.fullName, args)
  }

  /** redis ACLChangeSelectorPerm: the command and its subcommands; first args dropped. */
  changeCommand(command: AclCommand, allow: boolean): void {
    this.setBit(command.fullName, allow)
    this.firstArgs.delete(command.fullName)
    for (const sub of command.subcommands) this.setBit(sub.fullName, allow)
  }

  private setBit(name: string, allow: boolean): void {
    if (allow) this.allowed.add(name)
    else {
      this.allowed.delete(name)
      this.allCommands = false
    }
  }
}

/** A new user as redis ACLCreateUser makes it: off, no password, nothing allowed; channels by acl-pubsub-default. */
export function newUser(name: string, allChannelsByDefault: boolean): AclUser {
  const user = new AclUser(name)
  user.allChannels = allChannelsByDefault
  return user
}
