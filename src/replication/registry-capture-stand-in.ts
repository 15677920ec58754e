/**
 * THROWAWAY stand-in for the sync-payload branch's `store/registry-capture.ts` (same interface),
 * so that the master side can be built and tested before it lands: each record holds the filter's
 * name only. Deleted when the real one is merged (full-sync.ts imports from here only).
 */
import type { FilterRegistry } from '../store/registry.js'

export interface RegistryCapture {
  next(maxBytes: number): Buffer | null
  readonly totalBytes: number
  release(): void
}

export function captureRegistry(registry: FilterRegistry): RegistryCapture {
  const parts: Buffer[] = [Buffer.from('BFSSYNC1')]
  for (const name of registry.names()) {
    const bytes = Buffer.from(name, 'latin1')
    const head = Buffer.alloc(9)
    head[0] = 1
    head.writeBigUInt64LE(BigInt(bytes.length), 1)
    parts.push(head, bytes)
  }
  parts.push(Buffer.from([0]))
  let payload: Buffer | undefined = Buffer.concat(parts)
  let at = 0
  const totalBytes = payload.length
  return {
    totalBytes,
    next(maxBytes) {
      if (payload === undefined || at >= payload.length) return null
      const out = payload.subarray(at, at + maxBytes)
      at += out.length
      return out
    },
    release() {
      payload = undefined
    },
  }
}
