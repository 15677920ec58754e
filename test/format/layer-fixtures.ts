// Builders for test filters, sized the way RedisBloom 2.4's bloom_init (NOROUND) sizes a layer.
import type { FilterParts, Hashing, LayerParts } from '../../src/core/scalable-filter.js'

const LN2_SQUARED = 0.480453013918201
const LN2 = 0.693147180559945

/** A layer of `capacity` items at `errorRate`, its bitmap filled with a deterministic pattern. */
export function makeLayer(capacity: number, errorRate: number, items = 0, pattern = 0): LayerParts {
  const bitsPerEntry = -Math.log(errorRate) / LN2_SQUARED
  const rawBits = Math.max(1, Math.floor(capacity * bitsPerEntry))
  const byteCount = rawBits % 64 ? (Math.floor(rawBits / 64) + 1) * 8 : rawBits / 8
  const bitmap = new Uint8Array(byteCount)
  if (pattern !== 0) for (let i = 0; i < byteCount; i++) bitmap[i] = (i * 31 + pattern) & 0xff
  return {
    capacity,
    errorRate,
    bitsPerEntry,
    hashCount: Math.ceil(LN2 * bitsPerEntry),
    bitCount: byteCount * 8,
    items,
    bitmap,
  }
}

/** A scalable filter: layer i has capacity c·e^i and error rate p·0.5^(i+1), as RedisBloom builds. */
export function makeScalable(
  layerCount: number,
  hashing: Hashing = { kind: 'redisbloom' },
  expansion = 2,
): FilterParts {
  const layers: LayerParts[] = []
  for (let i = 0; i < layerCount; i++) {
    const capacity = 10 * expansion ** i
    layers.push(makeLayer(capacity, 0.01 * 0.5 ** (i + 1), i === layerCount - 1 ? 3 : capacity, i + 1))
  }
  return { hashing, expansion, nonScaling: false, layers }
}

/** Bytes from a hex string with any whitespace. */
export function hex(text: string): Uint8Array {
  const clean = text.replace(/\s+/g, '')
  const out = new Uint8Array(clean.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = parseInt(clean.slice(2 * i, 2 * i + 2), 16)
  return out
}

/** Lower-case hex of `bytes`, no separators. */
export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}

/** Concatenates byte arrays. */
export function concat(pieces: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of pieces) {
    out.set(p, at)
    at += p.length
  }
  return out
}
