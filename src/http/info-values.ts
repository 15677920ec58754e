/**
 * Reading INFO's fields as values (commands/admin/info.ts infoFields): what /metrics and the status
 * page take from them.
 */
import type { InfoPairs, InfoValue } from '../commands/admin/info.js'

/**
 * A field's value as a number: a finite number as it is, a figure INFO formats as text
 * (`toFixed`) as the number it shows; else undefined.
 */
export function infoNumber(value: InfoValue | undefined): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined
  if (typeof value !== 'string') return undefined
  const n = Number(value)
  return Number.isFinite(n) ? n : undefined
}

/** A part of a field's `key=value` pairs (a keyspace or replica line), if the field has pairs. */
export function infoPart(value: InfoValue | undefined, key: string): string | number | undefined {
  if (typeof value !== 'object') return undefined
  return (value as InfoPairs).find(([name]) => name === key)?.[1]
}
