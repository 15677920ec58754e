/** `rename-command NAME NEWNAME` from bfs.conf, applied to the command table once at start. */
import type { CommandTable } from '../commands/kernel/table.js'
import { ConfigError, type RenameRule } from '../runtime/config.js'

/**
 * Renames (or, with '' as the new name, removes) each command in order, as redis config.c does.
 * @throws ConfigError naming the rule for a command that does not exist or a name already taken
 */
export function applyRenames(table: CommandTable, rules: readonly RenameRule[]): void {
  for (const { from, to } of rules) {
    const lower = from.toLowerCase()
    if (table.get(lower) === undefined)
      throw new ConfigError(`rename-command ${from}: No such command in rename-command`)
    if (to !== '' && table.get(to.toLowerCase()) !== undefined) {
      throw new ConfigError(`rename-command ${from} ${to}: Target command name already exists`)
    }
    table.rename(lower, to)
  }
}
