/**
 * An ACL selector: the keys, channels and commands one set of rules allows, as redis 7.0 acl.c
 * ACLSetSelector parses them (the texts of AclRuleError are ACLSetUserStringError's). A user is
 * its root selector (acl-user.ts) plus the selectors in parentheses, each allowing on its own.
 */
import type { AclCommand, AclCommandSpace } from './acl-commands.js'
import { categoryName } from './acl-categories.js'
import { ACL_RULE_ERROR } from '../../../protocol/error-texts.js'

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

export const { UNKNOWN_NAME: UNKNOWN, SYNTAX } = ACL_RULE_ERROR
const { AFTER_ALLKEYS, AFTER_ALLCHANNELS, SUBCOMMAND_FIRST_ARG } = ACL_RULE_ERROR

/** redis ACLStringHasSpaces: a space (isspace) or a NUL byte. */
export function hasSpaces(bytes: Uint8Array): boolean {
  for (const c of bytes) if (c === 0 || c === 0x20 || (c >= 0x09 && c <= 0x0d)) return true
  return false
}

export class AclSelector {
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

  /** A selector as redis ACLCreateSelector makes it: nothing allowed, channels by acl-pubsub-default. */
  constructor(allChannelsByDefault = false) {
    this.allChannels = allChannelsByDefault
  }

  /** This selector's rules copied onto `target` (redis ACLCopySelector). */
  copySelectorTo<T extends AclSelector>(target: T): T {
    target.allKeys = this.allKeys
    target.keys = this.keys.map((key) => ({ ...key }))
    target.allChannels = this.allChannels
    target.channels = [...this.channels]
    target.allCommands = this.allCommands
    target.futureCommands = this.futureCommands
    target.allowed = new Set(this.allowed)
    target.firstArgs = new Map([...this.firstArgs].map(([command, args]) => [command, [...args]]))
    return target
  }

  /** Whether nothing is checked for it: every command, key and channel. */
  get unrestricted(): boolean {
    return this.allCommands && this.allKeys && this.allChannels
  }

  /** +@all / -@all (allcommands / nocommands). */
  setAllCommands(value: boolean, space: AclCommandSpace): void {
    this.allowed = value ? new Set(space.all.map((command) => command.fullName)) : new Set()
    this.allCommands = value
    this.futureCommands = value
    this.firstArgs.clear()
  }

  /** redis ACLSetSelector: keys, channels and commands; throws AclRuleError. */
  applySelectorRule(op: Buffer, space: AclCommandSpace): void {
    const word = op.toString('latin1')
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
    else if (word[0] === '-') this.changeCommand(commandNamed(word.slice(1), space), false)
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

  /** `+cmd`, `+container|sub`, or `+cmd|firstarg` for a command without subcommands. */
  private allowCommand(name: string, space: AclCommandSpace): void {
    const bar = name.lastIndexOf('|')
    if (bar < 0) return this.changeCommand(commandNamed(name, space), true)
    const command = commandNamed(name.slice(0, bar), space)
    const sub = name.slice(bar + 1)
    if (command.parent !== undefined) throw new AclRuleError(SUBCOMMAND_FIRST_ARG)
    if (sub === '') throw new AclRuleError(SYNTAX)
    if (command.subcommands.length > 0) return this.changeCommand(commandNamed(name, space), true)
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

function commandNamed(name: string, space: AclCommandSpace): AclCommand {
  const command = space.lookup(name)
  if (command === undefined) throw new AclRuleError(UNKNOWN, true)
  return command
}
