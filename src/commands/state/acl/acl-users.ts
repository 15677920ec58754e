/**
 * The server's ACL users (redis 7.0 acl.c's Users rax and DefaultUser): creating and changing
 * them all-or-nothing (ACLStringSetUser), authentication (ACLCheckUserCredentials), `requirepass`
 * as the default user's password (ACLUpdateDefaultUserPassword), ACL LIST's lines and the aclfile's
 * text (ACLLoadFromFile, ACLSaveToFile's content), and the log of denials.
 */
import { aclCommandSpace, type AclCommandSpace, type AclTable } from './acl-commands.js'
import { AclRuleError, AclUser, hasSpaces, mergeSelectorArguments, newUser } from './acl-user.js'
import { describeUser } from './acl-describe.js'
import { AclLog } from './acl-log.js'
import {
  ACL_RULE_ERROR,
  aclDuplicateUserText,
  aclFileBadUsernameText,
  aclFileDuplicateUserText,
  aclFileNoUserText,
  aclFileNotLoadedText,
  aclFileOperationText,
  aclFileRuleText,
  aclFileUnmatchedSelectorText,
  aclModifierText,
  aclUnmatchedSelectorText,
  aclUserDeclarationText,
} from '../../../protocol/error-texts.js'

/** What the users need of the configuration. */
export interface AclSettings {
  readonly 'acl-pubsub-default': string
  readonly 'acllog-max-len': number
}

export const DEFAULT_USER = 'default'

export class AclUsers {
  private users = new Map<string, AclUser>()
  readonly log = new AclLog()
  /** Whether every user may run every command on every key and channel: dispatch then checks nothing. */
  unrestricted = true
  /** Whether the default user needs no password (on and nopass): new clients start authenticated. */
  defaultOpen = true
  /** Counts the changes to any user (server/thread-plane.ts: what a connection's user may run). */
  version = 0

  constructor(
    private readonly table: AclTable,
    private readonly settings: () => AclSettings,
  ) {
    this.users.set(DEFAULT_USER, this.createDefault())
    this.changed()
  }

  get space(): AclCommandSpace {
    return aclCommandSpace(this.table)
  }

  private get allChannelsByDefault(): boolean {
    return this.settings()['acl-pubsub-default'] === 'allchannels'
  }

  /** redis ACLCreateDefaultUser: on, nopass, ~*, &*, +@all. */
  private createDefault(): AclUser {
    const user = new AclUser(DEFAULT_USER)
    const space = this.space
    for (const rule of ['+@all', '~*', '&*', 'on', 'nopass']) user.apply(Buffer.from(rule), space, false)
    return user
  }

  /** Recomputes the fast-path flags after any change. */
  private changed(): void {
    this.version++
    this.unrestricted = [...this.users.values()].every((user) => user.unrestricted)
    const base = this.users.get(DEFAULT_USER)!
    this.defaultOpen = base.enabled && base.nopass
  }

  get(name: string): AclUser | undefined {
    return this.users.get(name)
  }

  /** Names in byte order (redis's rax). */
  names(): string[] {
    return [...this.users.keys()].sort((a, b) => Buffer.compare(Buffer.from(a, 'latin1'), Buffer.from(b, 'latin1')))
  }

  /**
   * ACL SETUSER: every rule applied to a copy first, so that an error changes nothing. Returns
   * the error text (without `ERR `), or undefined; `changedUser` gets the user before and after.
   */
  setUser(name: Buffer, rules: readonly Buffer[]): string | undefined {
    if (hasSpaces(name)) return "Usernames can't contain spaces or null characters"
    const key = name.toString('latin1')
    const old = this.users.get(key)
    const staged = old?.copy() ?? newUser(key, this.allChannelsByDefault)
    const error = this.applyRules(staged, rules)
    if (error !== undefined) return error
    this.users.set(key, staged)
    this.changed()
    return undefined
  }

  /** Applies rules to a user; returns redis's "Error in ACL SETUSER modifier" text on the first bad one. */
  private applyRules(user: AclUser, given: readonly Buffer[]): string | undefined {
    const rules = mergeSelectorArguments(given)
    if (typeof rules === 'string') return aclUnmatchedSelectorText(rules)
    const space = this.space
    for (const rule of rules) {
      try {
        user.apply(rule, space, this.allChannelsByDefault)
      } catch (error) {
        if (!(error instanceof AclRuleError)) throw error
        return aclModifierText(rule.toString('latin1'), error.message)
      }
    }
    return undefined
  }

  /** ACL DELUSER's removal (the default user is refused before). Returns whether it existed. */
  delete(name: string): boolean {
    const deleted = name !== DEFAULT_USER && this.users.delete(name)
    if (deleted) this.changed()
    return deleted
  }

  /** redis ACLCheckUserCredentials: the user, when it exists, is on and the password matches. */
  authenticate(name: Buffer, password: Buffer): AclUser | undefined {
    const user = this.users.get(name.toString('latin1'))
    if (user === undefined || !user.enabled) return undefined
    return user.passwordMatches(password) ? user : undefined
  }

  /** `requirepass` (CONFIG SET too): the default user's only password, or nopass when ''. */
  setDefaultPassword(password: string): void {
    const base = this.users.get(DEFAULT_USER)!
    const space = this.space
    base.apply(Buffer.from('resetpass'), space, false)
    base.apply(
      password === '' ? Buffer.from('nopass') : Buffer.concat([Buffer.from('>'), Buffer.from(password)]),
      space,
      false,
    )
    this.changed()
  }

  /** `user <name> <rules>`, one per user in name order: ACL LIST, ACL SAVE, CONFIG REWRITE. */
  lines(): string[] {
    const space = this.space
    return this.names().map((name) => `user ${name} ${describeUser(this.users.get(name)!, space)}`)
  }

  /** `user` lines of the config file at start (redis ACLLoadConfiguredUsers); returns an error text. */
  loadConfigured(lines: readonly (readonly string[])[]): string | undefined {
    for (const words of lines) {
      const name = words[0]!
      if (name !== DEFAULT_USER && this.users.has(name)) return aclDuplicateUserText(name)
      const user =
        name === DEFAULT_USER ? this.users.get(DEFAULT_USER)!.copy() : newUser(name, this.allChannelsByDefault)
      if (name === DEFAULT_USER) user.apply(Buffer.from('reset'), this.space, this.allChannelsByDefault)
      if (hasSpaces(Buffer.from(name, 'latin1'))) return aclUserDeclarationText(name, ACL_RULE_ERROR.USERNAME_SPACES)
      const error = this.applyRules(
        user,
        words.slice(1).map((word) => Buffer.from(word, 'latin1')),
      )
      if (error !== undefined) return aclUserDeclarationText(name, error)
      this.users.set(name, user)
    }
    this.changed()
    return undefined
  }

  /**
   * ACL LOAD (and the aclfile at start): the file's users replace every user, all or nothing
   * (redis ACLLoadFromFile and its texts). Returns the errors, or undefined once loaded.
   */
  loadFile(text: string, fileName: string): string | undefined {
    const loaded = new Map<string, AclUser>()
    let errors = ''
    text.split('\n').forEach((raw, index) => {
      const line = raw.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '')
      const where = `${fileName}:${index + 1}`
      if (line === '') return
      const words = line.split(' ')
      if (words[0] !== 'user' || words.length < 2) return void (errors += aclFileNoUserText(where))
      const name = words[1]!
      if (hasSpaces(Buffer.from(name, 'latin1'))) return void (errors += aclFileBadUsernameText(where, name))
      if (loaded.has(name)) return void (errors += aclFileDuplicateUserText(name, index + 1))
      const user = newUser(name, this.allChannelsByDefault)
      loaded.set(name, user)
      const rules = mergeSelectorArguments(words.slice(2).map((word) => Buffer.from(word, 'latin1')))
      if (typeof rules === 'string') errors += aclFileUnmatchedSelectorText(where)
      else errors += this.applyFileRules(user, rules, where)
    })
    if (errors !== '') return aclFileNotLoadedText(errors)
    if (!loaded.has(DEFAULT_USER)) loaded.set(DEFAULT_USER, this.createDefault())
    this.users = loaded
    this.changed()
    return undefined
  }

  /** One aclfile line's rules: every unknown name is reported, and the first other error. */
  private applyFileRules(user: AclUser, rules: readonly Buffer[], where: string): string {
    let errors = ''
    let syntaxError = false
    for (const rule of rules) {
      const op = Buffer.from(rule.toString('latin1').replace(/^[\t\r\n]+|[\t\r\n]+$/g, ''), 'latin1')
      try {
        user.apply(op, this.space, this.allChannelsByDefault)
      } catch (error) {
        if (!(error instanceof AclRuleError)) throw error
        if (error.unknownName) errors += aclFileOperationText(where, op.toString('latin1'), error.message)
        else if (!syntaxError) {
          errors += aclFileRuleText(where, error.message)
          syntaxError = true
        }
      }
    }
    return errors
  }

  /** The aclfile's text (ACL SAVE): ACL LIST's lines, each ended by a newline. */
  fileText(): string {
    return this.lines()
      .map((line) => `${line}\n`)
      .join('')
  }
}

/** CLIENT LIST's `user=`: the session's user, `(superuser)` for the server's own sessions (redis: no user). */
export function userField(client: { readonly user: string }): string {
  return client.user === '' ? '(superuser)' : client.user
}
