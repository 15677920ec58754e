/**
 * The rows of the CF.* commands (cuckoo.ts, cuckoo-chunks.ts) for the command table: flags and
 * key positions as RedisBloom 2.4.23 registers them (rebloom.c CREATE_WRCMD "write deny-oom",
 * CREATE_ROCMD "readonly fast", keys 1 1 1, arity -1 reported and checked by each handler),
 * except CF.COMPACT, a write here: it moves fingerprints and frees sub-filters, and is propagated.
 * CF.ADD, CF.EXISTS and CF.DEL answer together with a read's others (read-batch.ts).
 */
import type { CommandSpec } from '../kernel/context.js'
import {
  cfAdd,
  cfAddnx,
  cfCompact,
  cfCount,
  cfDebug,
  cfDel,
  cfExists,
  cfInfo,
  cfInsert,
  cfInsertnx,
  cfMexists,
  cfReserve,
} from './cuckoo.js'
import { cfLoadchunk, cfScandump } from './cuckoo-chunks.js'

const WRITE = ['write', 'denyoom', 'module'] as const
const READ = ['readonly', 'fast', 'module'] as const
// Group 'bf': RedisBloom's module, as COMMAND DOCS reports its commands (group module, module bf).
const ROW = { keys: [1, 1, 1], group: 'bf', reportedArity: -1 } as const

export const CUCKOO_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'CF.RESERVE',
    arity: -3,
    flags: WRITE,
    ...ROW,
    since: '1.0.0',
    summary: 'Creates a new Cuckoo Filter',
    handler: cfReserve,
  },
  {
    name: 'CF.ADD',
    arity: 3,
    flags: WRITE,
    ...ROW,
    since: '1.0.0',
    summary: 'Adds an item to a Cuckoo Filter',
    handler: cfAdd,
    answersTogether: true,
  },
  {
    name: 'CF.ADDNX',
    arity: 3,
    flags: WRITE,
    ...ROW,
    since: '1.0.0',
    summary: 'Adds an item to a Cuckoo Filter if the item did not exist previously.',
    handler: cfAddnx,
  },
  {
    name: 'CF.INSERT',
    arity: -4,
    flags: WRITE,
    ...ROW,
    since: '1.0.0',
    summary: 'Adds one or more items to a Cuckoo Filter. A filter will be created if it does not exist',
    handler: cfInsert,
  },
  {
    name: 'CF.INSERTNX',
    arity: -4,
    flags: WRITE,
    ...ROW,
    since: '1.0.0',
    summary:
      'Adds one or more items to a Cuckoo Filter if the items did not exist previously. A filter will be created if it does not exist',
    handler: cfInsertnx,
  },
  {
    name: 'CF.EXISTS',
    arity: 3,
    flags: READ,
    ...ROW,
    since: '1.0.0',
    summary: 'Checks whether one or more items exist in a Cuckoo Filter',
    handler: cfExists,
    answersTogether: true,
  },
  {
    name: 'CF.MEXISTS',
    arity: -3,
    flags: READ,
    ...ROW,
    since: '1.0.0',
    summary: 'Checks whether one or more items exist in a Cuckoo Filter',
    handler: cfMexists,
  },
  {
    name: 'CF.COUNT',
    arity: 3,
    flags: READ,
    ...ROW,
    since: '1.0.0',
    summary: 'Return the number of times an item might be in a Cuckoo Filter',
    handler: cfCount,
  },
  {
    name: 'CF.DEL',
    arity: 3,
    flags: WRITE,
    ...ROW,
    since: '1.0.0',
    summary: 'Deletes an item from a Cuckoo Filter',
    handler: cfDel,
    answersTogether: true,
  },
  {
    name: 'CF.COMPACT',
    arity: 2,
    flags: ['write', 'module'],
    ...ROW,
    since: '1.0.0',
    summary: 'Moves fingerprints to older sub-filters and frees emptied ones (bfs: a write)',
    handler: cfCompact,
  },
  {
    name: 'CF.SCANDUMP',
    arity: 3,
    flags: READ,
    ...ROW,
    since: '1.0.0',
    summary: 'Begins an incremental save of the bloom filter',
    handler: cfScandump,
  },
  {
    name: 'CF.LOADCHUNK',
    arity: 4,
    flags: WRITE,
    ...ROW,
    since: '1.0.0',
    summary: 'Restores a filter previously saved using SCANDUMP',
    handler: cfLoadchunk,
  },
  {
    name: 'CF.INFO',
    arity: 2,
    flags: READ,
    ...ROW,
    since: '1.0.0',
    summary: 'Returns information about a Cuckoo Filter',
    handler: cfInfo,
  },
  {
    name: 'CF.DEBUG',
    arity: 2,
    flags: READ,
    ...ROW,
    since: '1.0.0',
    summary: 'Returns the settings and counters of a Cuckoo Filter as one line',
    handler: cfDebug,
  },
]
