/**
 * The command rows of moving keys between nodes (redis 7.0.15's arity, flags and key positions):
 * DUMP, RESTORE, RESTORE-ASKING, MIGRATE, and bfs's private BFS.RESTORE-PART (docs/MIGRATE.md).
 */
import type { CommandSpec } from '../kernel/context.js'
import { dump, restore } from './restore.js'
import { restorePart } from './restore-part.js'
import { migrate } from './migrate.js'

export const MIGRATION_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'DUMP',
    arity: 2,
    flags: ['readonly'],
    keys: [1, 1, 1],
    group: 'generic',
    since: '2.6.0',
    summary: 'Returns a serialized representation of the value stored at a key.',
    handler: dump,
  },
  {
    name: 'RESTORE',
    arity: -4,
    flags: ['write', 'denyoom'],
    keys: [1, 1, 1],
    group: 'generic',
    since: '2.6.0',
    summary: 'Creates a key from the serialized representation of a value.',
    handler: restore,
  },
  {
    name: 'RESTORE-ASKING',
    arity: -4,
    flags: ['write', 'denyoom', 'asking'],
    keys: [1, 1, 1],
    group: 'server',
    since: '3.0.0',
    summary: 'An internal command for migrating keys in a cluster.',
    handler: restore,
  },
  {
    name: 'MIGRATE',
    arity: -6,
    flags: ['write'],
    keys: [3, 3, 1],
    group: 'generic',
    since: '2.6.0',
    summary: 'Atomically transfers a key from one Redis instance to another.',
    handler: migrate,
  },
  // bfs's own: a filter too large for one RESTORE, in parts (restore-part.ts, docs/MIGRATE.md).
  {
    name: 'BFS.RESTORE-PART',
    arity: -6,
    reportedArity: -1,
    flags: ['write', 'denyoom', 'module', 'asking'],
    keys: [1, 1, 1],
    group: 'bf',
    since: '2.4.0',
    summary: 'One part of a filter MIGRATE streams to a bfs target (bfs).',
    handler: restorePart,
  },
]
