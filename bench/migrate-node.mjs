#!/usr/bin/env node
/**
 * One bfs node for bench/migrate.mjs (`cluster` as a third argument: in cluster mode): a server on the port given, with Node's event-loop delay
 * histogram (perf_hooks.monitorEventLoopDelay, 1 ms resolution) answering over the IPC channel:
 * 'reset' clears it, 'report' sends back its max and p99 in ms.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { createServer } from '../dist/server/server.js'

const [port, dir, cluster] = process.argv.slice(2)
const clusterConfig =
  cluster === 'cluster'
    ? { 'cluster-enabled': true, 'cluster-config-file': `${dir}/nodes.conf`, 'cluster-node-timeout': 5000 }
    : {}
const server = createServer({
  config: { port: Number(port), dir, save: '', appendonly: false, ...clusterConfig },
  logSink: () => {},
})
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
