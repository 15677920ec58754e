/** A command's reply, or its error's text: for tests comparing refusals word for word. */
import type { Redis } from 'ioredis'

/** The reply of `args` (Buffers for bulk replies when `buffers`), or the error's message. */
export async function replyOrError(
  client: Redis,
  args: readonly (string | Buffer)[],
  buffers = false,
): Promise<unknown> {
  const [name, ...rest] = args as [string, ...(string | Buffer)[]]
  try {
    return await (buffers ? client.callBuffer(name, ...rest) : client.call(name, ...rest))
  } catch (error) {
    return (error as Error).message
  }
}
