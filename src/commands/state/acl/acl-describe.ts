/**
 * A user as rules that make it again: ACL LIST, ACL SAVE, CONFIG REWRITE's `user` lines and
 * ACL GETUSER's fields, as redis 7.0 acl.c ACLDescribeUser and ACLDescribeSelectorCommandRules
 * write them (the categories that fit best first, then single commands). Single commands follow
 * the table's order where redis follows its command dict's (hash) order.
 */
import type { AclCommandSpace } from './acl-commands.js'
import { ACL_CATEGORIES } from './acl-categories.js'
import type { AclUser } from './acl-user.js'
import { AclSelector, KEY_ALL, KEY_READ, type KeyPattern } from './acl-selector.js'

/** redis sdsCatPatternString. */
export function keyPatternText(key: KeyPattern): string {
  const prefix = key.flags === KEY_ALL ? '~' : key.flags === KEY_READ ? '%R~' : '%W~'
  return prefix + key.pattern.toString('latin1')
}

/** ACL GETUSER's `keys`: `~*`, or the patterns with spaces between. */
export function keysText(selector: AclSelector): string {
  return selector.allKeys ? '~*' : selector.keys.map(keyPatternText).join(' ')
}

/** ACL GETUSER's `channels`. */
export function channelsText(selector: AclSelector): string {
  return selector.allChannels ? '&*' : selector.channels.map((channel) => `&${channel.toString('latin1')}`).join(' ')
}

/** redis ACLDescribeSelector: keys, channels, then the command rules. */
function describeSelector(selector: AclSelector, space: AclCommandSpace): string {
  let text = selector.allKeys ? '~* ' : selector.keys.map((key) => `${keyPatternText(key)} `).join('')
  text += selector.allChannels
    ? '&* '
    : `resetchannels ${selector.channels.map((channel) => `&${channel.toString('latin1')} `).join('')}`
  return text + describeCommands(selector, space)
}

/** The user's line after `user <name> ` (redis ACLDescribeUser): flags, password hashes, root selector, ` (selector)`s. */
export function describeUser(user: AclUser, space: AclCommandSpace): string {
  let text = user.enabled ? 'on ' : 'off '
  if (user.nopass) text += 'nopass '
  if (user.sanitize !== '') text += `${user.sanitize} `
  for (const hash of user.passwords) text += `#${hash} `
  text += describeSelector(user, space)
  for (const selector of user.selectors) text += ` (${describeSelector(selector, space)})`
  return text
}

/** Counts of a category's commands the set allows (on) and denies (off). */
function countCategory(allowed: ReadonlySet<string>, space: AclCommandSpace, category: string): [number, number] {
  let on = 0
  let off = 0
  for (const command of space.all) {
    if (!command.categories.has(category)) continue
    if (allowed.has(command.fullName)) on++
    else off++
  }
  return [on, off]
}

/** The category that best fits what is left to describe (redis's loop over ACLCommandCategories). */
function bestCategory(
  temp: ReadonlySet<string>,
  space: AclCommandSpace,
  additive: boolean,
  applied: Set<string>,
): string | undefined {
  let best: string | undefined
  let minDiff = Number.MAX_SAFE_INTEGER
  let maxSame = 0
  for (const category of ACL_CATEGORIES) {
    if (applied.has(category)) continue
    const [on, off] = countCategory(temp, space, category)
    const diff = additive ? off : on
    const same = additive ? on : off
    if (same > diff && (diff < minDiff || (diff === minDiff && same > maxSame))) {
      best = category
      minDiff = diff
      maxSame = same
    }
  }
  return best
}

/** redis ACLDescribeSelectorCommandRules: +@all or -@all, the best-fitting categories, then single commands. */
export function describeCommands(user: AclSelector, space: AclCommandSpace): string {
  const additive = !user.futureCommands
  const rules: string[] = [additive ? '-@all' : '+@all']
  // A user made from the rules so far (fake) and what is left to describe (temp), as in redis.
  const fake = new AclSelector()
  fake.setAllCommands(!additive, space)
  const temp = new AclSelector()
  temp.allowed = new Set(user.allowed)
  const applied = new Set<string>()
  for (;;) {
    const best = bestCategory(temp.allowed, space, additive, applied)
    if (best === undefined) break
    for (const command of space.all) {
      if (!command.categories.has(best)) continue
      fake.changeCommand(command, additive)
      temp.changeCommand(command, !additive)
    }
    rules.push(`${additive ? '+' : '-'}@${best}`)
    applied.add(best)
  }
  for (const command of space.all) {
    const allowed = user.allowed.has(command.fullName)
    if (allowed !== fake.allowed.has(command.fullName)) {
      rules.push(`${allowed ? '+' : '-'}${command.fullName}`)
      fake.changeCommand(command, allowed)
    }
    if (!allowed)
      for (const arg of user.firstArgs.get(command.fullName) ?? []) rules.push(`+${command.fullName}|${arg}`)
  }
  return rules.join(' ')
}
