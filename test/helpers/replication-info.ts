/** Reading replication state from a server in tests: an INFO section as a field map, and polling. */
import type { Redis } from 'ioredis'

/** INFO `section` as a map of its `field:value` lines. */
export async function infoFields(client: Redis, section: string): Promise<Map<string, string>> {
  const text = (await client.info(section)) as string
  return new Map(
    text
      .split('\r\n')
      .filter((line) => line.includes(':'))
      .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1)]),
  )
}

/** Polls `check` every 50 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function until(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
