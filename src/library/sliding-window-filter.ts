/**
 * SlidingWindowFilter: the in-process face of the filter behind every APBF.* key (core/
 * window-filter.ts), beside {@link BloomFilter}: items are forgotten once they leave a window of
 * the last `capacity` adds (COUNT) or of the last `windowSeconds` (TIME), and every item added
 * inside the window answers true. Strings are encoded as UTF-8, as Redis clients send them, so an
 * answer in process is the answer of APBF.EXISTS for the same filter.
 *
 * TIME filters read `Date.now()` unless a time is given: pass the times yourself to replay a
 * stream with its own timestamps (time never goes back: an add stamped before the latest counts
 * as made at the latest).
 */
import { WindowFilter, type WindowInfo } from '../core/window-filter.js'
import { decodeWindowFile, encodeWindowFile } from '../format/window-file.js'
import { itemBytes, type Item } from './bloom-filter.js'

/** How to build a {@link SlidingWindowFilter}. */
export type SlidingWindowOptions =
  | { window: 'count'; capacity: number; errorRate: number }
  | { window: 'time'; windowSeconds: number; capacity: number; errorRate: number }

/**
 * ```ts
 * const today = new SlidingWindowFilter({ window: 'time', windowSeconds: 86_400, capacity: 1_000_000, errorRate: 0.001 })
 * today.add('order-42')   // true: new in the last 24 hours
 * today.add('order-42')   // false: seen
 * ```
 */
export class SlidingWindowFilter {
  /** The core filter, shared, not copied: hand it to a server's registry to serve it over the wire. */
  readonly window: WindowFilter

  /** @throws RangeError for a capacity, error rate or window no filter can be made of */
  constructor(options: SlidingWindowOptions) {
    const windowMs = options.window === 'time' ? options.windowSeconds * 1000 : undefined
    this.window = new WindowFilter({
      kind: options.window,
      errorRate: options.errorRate,
      capacity: options.capacity,
      windowMs,
    })
  }

  /** Wraps an existing core filter (one taken from a server's registry, say); nothing is copied. */
  static wrap(filter: WindowFilter): SlidingWindowFilter {
    const wrapped = Object.create(SlidingWindowFilter.prototype) as { window: WindowFilter }
    wrapped.window = filter
    return wrapped as SlidingWindowFilter
  }

  /** Decodes what {@link toBytes} (or a bfs snapshot's window file) holds. @throws DecodeError, RangeError */
  static fromBytes(bytes: Uint8Array): SlidingWindowFilter {
    return SlidingWindowFilter.wrap(WindowFilter.fromParts(decodeWindowFile(bytes).parts))
  }

  /** Adds an item at `now` (unix ms): true when it was not in the window (APBF.ADD's 1). It starts its window anew either way. */
  add(item: Item, now = Date.now()): boolean {
    const bytes = itemBytes(item)
    return this.window.add(bytes, 0, bytes.length, now) === 1
  }

  /** Whether the item is in the window at `now`: false is certain, true is wrong at about the error rate. */
  has(item: Item, now = Date.now()): boolean {
    const bytes = itemBytes(item)
    return this.window.has(bytes, 0, bytes.length, now)
  }

  /** What APBF.INFO reports. */
  info(now = Date.now()): WindowInfo {
    return this.window.info(now)
  }

  /** The filter as one window filter file (docs/FORMAT.md), readable by {@link fromBytes}. */
  toBytes(name: Item = ''): Uint8Array {
    return encodeWindowFile({ name: itemBytes(name), parts: this.window.toParts() })
  }
}
