/**
 * The commands ACL rules name: every command of the table under its original name (rules hold
 * whatever rename-command did, as redis's ACL works on orig_commands), and every subcommand as
 * `container|sub`, each with its categories (acl-categories.ts).
 */
import { categoriesOf, type CategorizedCommand } from './acl-categories.js'

/** A command as ACL rules see it in the table (kernel/context.ts CommandEntry): with its subcommands' names. */
export interface AclTableEntry extends CategorizedCommand {
  readonly subcommands: ReadonlyMap<string, unknown> | undefined
}

/** The command table as ACL reads it (kernel/table.ts CommandTable): every command under its original name. */
export interface AclTable {
  originalEntries(): Iterable<AclTableEntry>
}

/** One command or subcommand as ACL rules see it. */
export interface AclCommand {
  /** Lower case: 'bf.add', 'config|get'. */
  readonly fullName: string
  readonly categories: ReadonlySet<string>
  /** A container's subcommands (they follow it in {@link AclCommandSpace.all}). */
  readonly subcommands: readonly AclCommand[]
  /** The container of a subcommand. */
  readonly parent: AclCommand | undefined
}

/** Every command and subcommand, in the table's order (a container, then its subcommands). */
export class AclCommandSpace {
  readonly all: AclCommand[] = []
  readonly top: AclCommand[] = []
  private readonly byName = new Map<string, AclCommand>()

  constructor(entries: Iterable<AclTableEntry>) {
    for (const entry of entries) this.add(entry)
  }

  private add(entry: AclTableEntry): void {
    const name = entry.spec.name.toLowerCase()
    const subcommands: AclCommand[] = []
    const command: AclCommand = {
      fullName: name,
      categories: new Set(categoriesOf(entry, name)),
      subcommands,
      parent: undefined,
    }
    this.top.push(command)
    this.all.push(command)
    this.byName.set(name, command)
    for (const sub of entry.subcommands?.keys() ?? []) {
      const fullName = `${name}|${sub}`
      const child: AclCommand = {
        fullName,
        categories: new Set(categoriesOf(entry, fullName)),
        subcommands: [],
        parent: command,
      }
      subcommands.push(child)
      this.all.push(child)
      this.byName.set(fullName, child)
    }
  }

  /** A command or `container|sub` by name, any case (redis ACLLookupCommand). */
  lookup(name: string): AclCommand | undefined {
    return this.byName.get(name.toLowerCase())
  }
}

const SPACES = new WeakMap<AclTable, { size: number; space: AclCommandSpace }>()

/** The table's command space, made again when commands were added (an embedder's, at start). */
export function aclCommandSpace(table: AclTable): AclCommandSpace {
  const cached = SPACES.get(table)
  let size = 0
  for (const _ of table.originalEntries()) size++
  if (cached !== undefined && cached.size === size) return cached.space
  const space = new AclCommandSpace(table.originalEntries())
  SPACES.set(table, { size, space })
  return space
}
