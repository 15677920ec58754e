// The image's HEALTHCHECK: PING on 127.0.0.1 (port BFS_HEALTH_PORT, default 6381). Healthy when
// the server answers +PONG, or -NOAUTH (a password is set: the server answers all the same).
'use strict'
const net = require('node:net')
const port = Number(process.env.BFS_HEALTH_PORT || 6381)
const socket = net.connect(port, '127.0.0.1', () => socket.write('PING\r\n'))
let reply = ''
socket.setTimeout(2000, () => process.exit(1))
socket.on('error', () => process.exit(1))
socket.on('data', (data) => {
  reply += data.toString('latin1')
  if (!reply.includes('\r\n')) return
  process.exit(reply.startsWith('+PONG') || reply.startsWith('-NOAUTH') ? 0 : 1)
})
