/**
 * One ACL user, as redis 7.0 acl.c ACLSetUser changes it: on/off, passwords, the root selector's
 * keys, channels and commands (the user is its root selector: acl-selector.ts), and selectors in
 * parentheses, each allowing on its own. Passwords are kept as SHA-256 hex (ACLHashPassword) and
 * compared in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { AclCommandSpace } from './acl-commands.js'
import { AclRuleError, AclSelector, SYNTAX } from './acl-selector.js'
import { splitConfigLine } from '../../../runtime/config-line.js'
import { ACL_RULE_ERROR } from '../../../protocol/error-texts.js'

export { AclRuleError, hasSpaces, KEY_ALL, KEY_READ, KEY_WRITE, type KeyPattern } from './acl-selector.js'

const { NO_SUCH_PASSWORD, BAD_HASH } = ACL_RULE_ERROR

/** redis ACLHashPassword: SHA-256, lower-case hex. */
export function hashPassword(password: Uint8Array): string {
  return createHash('sha256').update(password).digest('hex')
}

const isHash = (text: string): boolean => /^[0-9a-f]{64}$/.test(text)

export class AclUser extends AclSelector {
  /** redis USER_FLAG_ENABLED / USER_FLAG_DISABLED: a new user is off. */
  enabled = false
  nopass = false
  /** redis's sanitize-payload flags: shown once set, no effect in bfs (no RESTORE payloads). */
  sanitize: '' | 'sanitize-payload' | 'skip-sanitize-payload' = ''
  passwords: string[] = []
  /** The selectors in parentheses, after the root one (the user itself). */
  selectors: AclSelector[] = []

  constructor(readonly name: string) {
    super()
  }

  /** A copy under another name (redis ACLCopyUser), to stage changes on. */
  copy(name = this.name): AclUser {
    const user = this.copySelectorTo(new AclUser(name))
    user.enabled = this.enabled
    user.nopass = this.nopass
    user.sanitize = this.sanitize
    user.passwords = [...this.passwords]
    user.selectors = this.selectors.map((selector) => selector.copySelectorTo(new AclSelector()))
    return user
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
    else if (word[0] === '(' && word.endsWith(')'))
      this.selectors.push(parseSelector(word, space, allChannelsByDefault))
    else if (lower === 'clearselectors') this.selectors = []
    else if (lower === 'reset') this.reset(space, allChannelsByDefault)
    else this.applySelectorRule(op, space)
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

  /** redis `reset`: resetpass, resetkeys, resetchannels (allchannels by acl-pubsub-default), off, clearselectors, -@all. */
  private reset(space: AclCommandSpace, allChannelsByDefault: boolean): void {
    this.nopass = false
    this.passwords = []
    this.allKeys = false
    this.keys = []
    this.allChannels = allChannelsByDefault
    this.channels = []
    this.enabled = false
    this.sanitize = 'sanitize-payload'
    this.selectors = []
    this.setAllCommands(false, space)
  }
}

/** redis aclCreateSelectorFromOpSet: `(rule rule ...)`, split as sdssplitargs does. */
function parseSelector(word: string, space: AclCommandSpace, allChannelsByDefault: boolean): AclSelector {
  const selector = new AclSelector(allChannelsByDefault)
  const rules = splitConfigLine(word.slice(1, -1))
  if (rules === undefined) throw new AclRuleError(SYNTAX)
  for (const rule of rules) selector.applySelectorRule(Buffer.from(rule, 'latin1'), space)
  return selector
}

/**
 * redis ACLMergeSelectorArguments: a selector split over several arguments (`(~x`, `+get)`) joined
 * with spaces. Returns the first argument of an unclosed selector as a string instead.
 */
export function mergeSelectorArguments(rules: readonly Buffer[]): Buffer[] | string {
  const merged: Buffer[] = []
  let open: Buffer[] | undefined
  for (const rule of rules) {
    if (open === undefined && rule[0] === 0x28 && rule[rule.length - 1] !== 0x29) {
      open = [rule]
      continue
    }
    if (open === undefined) {
      merged.push(rule)
      continue
    }
    open.push(Buffer.from(' '), rule)
    if (rule[rule.length - 1] === 0x29) {
      merged.push(Buffer.concat(open))
      open = undefined
    }
  }
  return open === undefined ? merged : open[0]!.toString('latin1')
}

/** A new user as redis ACLCreateUser makes it: off, no password, nothing allowed; channels by acl-pubsub-default. */
export function newUser(name: string, allChannelsByDefault: boolean): AclUser {
  const user = new AclUser(name)
  user.allChannels = allChannelsByDefault
  return user
}
