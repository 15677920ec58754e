/**
 * `timeout`: clients idle longer than it are closed by one sweep over all clients, run from the
 * server's cron once a second (redis clientsCronHandleTimeout), not a timer per client.
 */

/** What the sweep needs of a client. */
export interface IdleCandidate {
  readonly lastInteractionMs: number
  kill(): void
}

/**
 * Closes every client idle for more than `timeoutSeconds` (0 = never) at `nowMs`.
 * @returns how many were closed
 */
export function closeIdleClients(clients: Iterable<IdleCandidate>, nowMs: number, timeoutSeconds: number): number {
  if (timeoutSeconds <= 0) return 0
  const idleMs = timeoutSeconds * 1000
  const idle: IdleCandidate[] = []
  for (const client of clients) {
    if (nowMs - client.lastInteractionMs > idleMs) idle.push(client)
  }
  // Killing removes a client from the set being iterated, so collect first.
  for (const client of idle) client.kill()
  return idle.length
}
