#!/usr/bin/env node
/**
 * One bfs node for bench/migrate.mjs: a server on the port given, with Node's event-loop delay
 * histogram (perf_hooks.monitorEventLoopDelay, 1 ms resolution) answering over the IPC channel:
 * 'reset' clears it, 'report' sends back its max and p99 in ms.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { createServer } from '../dist/server/server.js'

const [port, dir] = process.argv.slice(2)
const server = createServer({ config: { port: Number(port), dir, save: '', appendonly: false }, logSink: () => {} })
await server.start()
const delay = monitorEventLoopDelay({ resolution: 1 })
delay.enable()
process.on('message', (message) => {
  if (message === 'reset') {
    delay.reset()
    process.send({ reset: true })
  } else if (message === 'report') {
    process.send({ maxMs: delay.max / 1e6, p99Ms: delay.percentile(99) / 1e6 })
  } else if (message === 'stop') {
    void server.close().then(() => process.exit(0))
  }
})
process.send({ ready: server.port })
