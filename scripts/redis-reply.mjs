// The replies of a running redis-server for the generator scripts (command-docs.mjs, acl-categories.mjs).
import net from 'node:net'

/** One RESP3 value from buf at pos: [value, next]; sets and arrays are arrays, maps are [key, value][]. */
export function parse(buf, pos) {
  const eol = buf.indexOf('\r\n', pos)
  const head = buf.toString('latin1', pos + 1, eol)
  const type = String.fromCharCode(buf[pos])
  let next = eol + 2
  if (type === '$') {
    const length = Number(head)
    return [buf.toString('utf8', next, next + length), next + length + 2]
  }
  if (type === '+') return [head, next]
  if (type === ':') return [Number(head), next]
  if (type === '*' || type === '~' || type === '%') {
    const count = Number(head) * (type === '%' ? 2 : 1)
    const items = []
    for (let i = 0; i < count; i++) {
      const [item, after] = parse(buf, next)
      items.push(item)
      next = after
    }
    if (type !== '%') return [items, next]
    const pairs = []
    for (let i = 0; i < items.length; i += 2) pairs.push([items[i], items[i + 1]])
    return [pairs, next]
  }
  throw new Error(`unexpected reply type ${type}`)
}

export function ask(port, ...commands) {
  const encode = (args) => `*${args.length}\r\n` + args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    let buf = Buffer.alloc(0)
    socket.on('error', reject)
    socket.on('data', (data) => {
      buf = Buffer.concat([buf, data])
      try {
        const replies = []
        let pos = 0
        for (let i = 0; i < commands.length; i++) {
          const [value, next] = parse(buf, pos)
          replies.push(value)
          pos = next
        }
        socket.end()
        resolve(replies)
      } catch {
        // incomplete: wait for more
      }
    })
    socket.write(commands.map(encode).join(''))
  })
}
