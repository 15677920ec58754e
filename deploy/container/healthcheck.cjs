// The image's HEALTHCHECK: PING on 127.0.0.1. Healthy when the server answers +PONG, or -NOAUTH
// (a password is set: the server answers all the same). The port: BFS_HEALTH_PORT, else the
// server's own --port flag (its command line, /proc/1/cmdline), else `port` in the config file it
// was started with, else 6381.
'use strict'
const fs = require('node:fs')
const net = require('node:net')

function serverPort() {
  if (process.env.BFS_HEALTH_PORT) return Number(process.env.BFS_HEALTH_PORT)
  let args
  try {
    args = fs.readFileSync('/proc/1/cmdline', 'utf8').split('\0')
  } catch {
    return 6381
  }
  let port
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--port') port = args[i + 1]
    else if (args[i].startsWith('--port=')) port = args[i].slice('--port='.length)
  }
  if (port !== undefined) return Number(port)
  const file = args.find((arg) => arg.endsWith('.conf'))
  if (file !== undefined) {
    try {
      const lines = fs.readFileSync(file, 'utf8').split('\n')
      for (const line of lines) {
        const match = /^\s*port\s+"?(\d+)"?\s*$/i.exec(line)
        if (match) port = match[1]
      }
    } catch {
      // unreadable: the default
    }
  }
  return Number(port ?? 6381)
}

const socket = net.connect(serverPort(), '127.0.0.1', () => socket.write('PING\r\n'))
let reply = ''
socket.setTimeout(2000, () => process.exit(1))
socket.on('error', () => process.exit(1))
socket.on('data', (data) => {
  reply += data.toString('latin1')
  if (!reply.includes('\r\n')) return
  process.exit(reply.startsWith('+PONG') || reply.startsWith('-NOAUTH') ? 0 : 1)
})
