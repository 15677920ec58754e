/**
 * Each key holds one kind of filter (store/registry.ts FilterEntry): a command of one family on a
 * key of the other answers redis's -WRONGTYPE, as RedisBloom's bfGetChain status SB_MISMATCH
 * does (rebloom.c statusStrerror). BF.EXISTS and BF.MEXISTS answer 0 instead, as RedisBloom 2.4
 * does for any key that is not a Bloom filter (BFCheck_RedisCommand: `is_empty` on any status
 * but SB_OK).
 */
import type { BloomEntry, CuckooEntry, FilterEntry, WindowEntry } from '../../store/registry.js'
import { ERR, ReplyError } from './reply-error.js'

/** The entry when it holds a Bloom filter, undefined when there is none; -WRONGTYPE for a window. */
export function bloomOrWrongType(entry: FilterEntry | undefined): BloomEntry | undefined {
  if (entry !== undefined && entry.kind !== 'bloom') throw new ReplyError(ERR.WRONG_TYPE)
  return entry
}

/** The entry when it holds a window filter, undefined when there is none; -WRONGTYPE for a Bloom filter. */
export function windowOrWrongType(entry: FilterEntry | undefined): WindowEntry | undefined {
  if (entry !== undefined && entry.kind !== 'window') throw new ReplyError(ERR.WRONG_TYPE)
  return entry
}

/** The entry when it holds a Cuckoo filter, undefined when there is none; -WRONGTYPE for another kind. */
export function cuckooOrWrongType(entry: FilterEntry | undefined): CuckooEntry | undefined {
  if (entry !== undefined && entry.kind !== 'cuckoo') throw new ReplyError(ERR.WRONG_TYPE)
  return entry
}
