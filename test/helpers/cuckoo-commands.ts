/**
 * The CF.* rows as extension commands, for a test server: until a Cuckoo filter survives every
 * path a Bloom filter does (snapshot, log, replication, DUMP/RESTORE...), the shipped command
 * table leaves them out, and tests add them through createServer's `commands`.
 */
import { CUCKOO_COMMANDS } from '../../src/commands/cuckoo-commands.js'
import type { CommandDefinition } from '../../src/commands/table.js'
import { CommandArgs } from '../../src/protocol/command-args.js'

export const CUCKOO_DEFINITIONS: readonly CommandDefinition[] = CUCKOO_COMMANDS.map((spec) => ({
  ...spec,
  handler: (ctx, args) => spec.handler(ctx, CommandArgs.of(args)),
}))
