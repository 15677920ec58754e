/**
 * Extension example: a crawler's "which of these links are new?" as one server-side command.
 *
 *     BFX.MADDNEW key item [item ...]  →  the items that were not in the filter yet, in order
 *
 * A crawler that finds 200 links on a page sends them in one command and gets back only the ones
 * to enqueue, already marked as seen: one round trip, and no zipping of BF.MADD's 0/1 array with
 * the links on the client. The filter is created with the server's defaults when it is missing,
 * as BF.MADD does.
 *
 * Run it (after `npm run build`) with a TypeScript runner of your choice, or import
 * {@link BFX_MADDNEW} into your own program and pass it to `createServer({ commands: [...] })`.
 */
import { pathToFileURL } from 'node:url'
import {
  createServer,
  ERR,
  FilterRegistry,
  FILTER_ERROR_TEXT,
  isFilterError,
  ReplyError,
  ScalableBloomFilter,
  keyspace,
  type BfsServer,
  type CommandContext,
  type CommandDefinition,
  type BloomEntry,
} from 'bloom-filter-server'

/** The filter under argv[1], created with the server's defaults when missing (as BF.MADD does). */
function filterFor(ctx: CommandContext, key: Buffer): BloomEntry {
  const { config } = ctx.server
  const registry = keyspace(ctx) // the client's selected database
  const name = FilterRegistry.nameOf(key)
  const existing = registry.get(name)
  // A key may hold a sliding-window filter (APBF.*) instead: redis's answer to the wrong kind of key.
  if (existing !== undefined && existing.kind !== 'bloom') throw new ReplyError(ERR.WRONG_TYPE)
  if (existing !== undefined) return existing
  const errorRate = config['default-error-rate']
  const capacity = config['default-capacity']
  const expansion = config['default-expansion']
  const maxBytes = config['max-filter-bytes']
  const filter = new ScalableBloomFilter({
    capacity,
    errorRate,
    expansion,
    nonScaling: false,
    maxLayerBytes: maxBytes > 0 ? maxBytes : undefined,
  })
  // Log built-in commands only, so that replaying the log does not need this extension.
  ctx.server.propagate(
    ['BF.RESERVE', key, String(errorRate), String(capacity), 'EXPANSION', String(expansion)].map(toBuffer),
  )
  return registry.set(name, filter)
}

function toBuffer(arg: string | Buffer): Buffer {
  return typeof arg === 'string' ? Buffer.from(arg) : arg
}

/**
 * BFX.MADDNEW key item [item ...] → array of the items that were new (now added). When the filter
 * refuses an item (non-scaling and full, or too large to grow) the array ends with that error, as
 * BF.MADD's does, and the items after it are not added.
 */
function bfxMaddNew(ctx: CommandContext, argv: Buffer[]): void {
  const entry = filterFor(ctx, argv[1]!)
  const fresh: Buffer[] = []
  let refusal: string | undefined
  for (let i = 2; i < argv.length; i++) {
    const outcome = entry.filter.add(argv[i]!)
    if (isFilterError(outcome)) {
      refusal = FILTER_ERROR_TEXT[outcome.code]
      break
    }
    if (outcome === 1) fresh.push(argv[i]!)
  }
  if (fresh.length > 0) {
    keyspace(ctx).touch(entry, fresh.length) // counts towards the `save` rules
    ctx.server.propagate([Buffer.from('BF.MADD'), argv[1]!, ...fresh])
  }
  const reply = ctx.client.reply
  reply.array(fresh.length + (refusal === undefined ? 0 : 1))
  for (const item of fresh) reply.bulk(item)
  if (refusal !== undefined) {
    ctx.server.stats.errorReplies++ // INFO errorstat counts an error element, as for BF.MADD
    reply.error(refusal)
  }
}

/** The command's row for the table: name, arity (-3: key and at least one item), flags, key positions. */
export const BFX_MADDNEW: CommandDefinition = {
  name: 'BFX.MADDNEW',
  arity: -3,
  flags: ['write', 'denyoom'],
  keys: [1, 1, 1],
  group: 'bf',
  summary: 'Adds items to a Bloom filter and returns those that were not in it yet',
  since: '0.1.0',
  handler: bfxMaddNew,
}

/** A bfs server with BFX.MADDNEW: `createServer` with one extra row for the command table. */
export function createCrawlerServer(port: number, dir: string): BfsServer {
  return createServer({ config: { port, dir }, commands: [BFX_MADDNEW] })
}

// Started directly (not imported): serve on port 6379 (or $PORT) with data in ./data.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const server = createCrawlerServer(Number(process.env.PORT ?? 6379), process.env.BFS_DIR ?? './data')
  await server.start()
  process.on('SIGINT', () => void server.close().then(() => process.exit(0)))
}
