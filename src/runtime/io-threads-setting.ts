/** Placeholder: replaced by the setting's own module. */
export function resolveIoThreads(requested: number, cores: number, nodeVersion: string): { threads: number; warning?: string } {
  const [major, minor] = nodeVersion.split('.').map(Number)
  const reuse = major! > 22 || (major === 22 && minor! >= 12)
  const threads = requested === 0 ? (cores < 4 ? 1 : Math.min(8, cores - 1)) : requested
  if (threads > 1 && !reuse) return { threads: 1, warning: `io-threads ${threads} needs Node.js 22.12 or later: serving from one thread` }
  return { threads }
}
