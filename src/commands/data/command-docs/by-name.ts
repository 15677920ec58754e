/**
 * The command docs of every group (this folder's files) joined into one map by name: what COMMAND
 * DOCS and COMMAND INFO serve (admin/command-docs.ts) and where the key positions of dispatch, ACL
 * and cluster come from (kernel/key-positions.ts).
 */
import type { CommandDoc } from './doc-types.js'
import { BLOOM_DOCS } from './bloom.js'
import { CLUSTER_DOCS } from './cluster.js'
import { CONNECTION_DOCS } from './connection.js'
import { GENERIC_DOCS } from './generic.js'
import { PUBSUB_DOCS } from './pubsub.js'
import { SERVER_DOCS } from './server.js'
import { REDIS_72_DOCS } from './redis-7.2.js'
import { TRANSACTIONS_DOCS } from './transactions.js'
import { WINDOW_DOCS } from './window.js'
import { CUCKOO_DOCS } from './cuckoo.js'

/** Every documented command and subcommand, by lower-case name (`config|get` for a subcommand). */
export const COMMAND_DOCS: ReadonlyMap<string, CommandDoc> = new Map(
  [CLUSTER_DOCS, CONNECTION_DOCS, GENERIC_DOCS, PUBSUB_DOCS, SERVER_DOCS, REDIS_72_DOCS, TRANSACTIONS_DOCS, BLOOM_DOCS, WINDOW_DOCS, CUCKOO_DOCS].flatMap((docs) =>
    Object.entries(docs),
  ),
)
