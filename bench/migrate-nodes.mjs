/**
 * What bench/migrate.mjs and bench/reshard.mjs share: bfs nodes as child processes
 * (bench/migrate-node.mjs, each with its own event-loop delay histogram) and the filters they move.
 */
import { fork } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))

/** A node on `port` (in cluster mode when `cluster`); `ask('reset' | 'report')` talks to its histogram. */
export function startNode(port, cluster = false) {
  const dir = mkdtempSync(path.join(tmpdir(), 'bfs-migrate-bench-'))
  const child = fork(path.join(here, 'migrate-node.mjs'), [String(port), dir, cluster ? 'cluster' : ''], {
    stdio: 'inherit',
  })
  const ask = (message) =>
    new Promise((resolve) => {
      child.once('message', resolve)
      child.send(message)
    })
  const ready = new Promise((resolve) => child.once('message', resolve))
  return { child, dir, ask, ready, port }
}

/** Stops the nodes and removes their directories. */
export async function stopNodes(nodes) {
  for (const node of nodes) {
    node.child.send('stop')
    await new Promise((resolve) => node.child.once('exit', resolve))
    rmSync(node.dir, { recursive: true, force: true })
  }
}

/** BF.RESERVE of about sizeMiB (RedisBloom's first layer: -ln(0.005)/ln²2 bits per item at 0.01), 100,000 items added; its SIZE. */
export async function bigFilter(client, key, sizeMiB) {
  const bitsPerItem = -Math.log(0.005) / (Math.LN2 * Math.LN2)
  await client.call('BF.RESERVE', key, '0.01', String(Math.floor((sizeMiB * 1024 * 1024 * 8) / bitsPerItem)))
  for (let i = 0; i < 100_000; i += 1000)
    await client.call('BF.MADD', key, ...Array.from({ length: 1000 }, (_, k) => `item:${i + k}`))
  return Number(await client.call('BF.INFO', key, 'SIZE'))
}

/** BF.RESERVE 0.01 1000 and 10 items for each name. */
export async function smallFilters(client, names) {
  const pipeline = client.pipeline()
  for (const name of names) {
    pipeline.call('BF.RESERVE', name, '0.01', '1000')
    pipeline.call('BF.MADD', name, ...Array.from({ length: 10 }, (_, k) => `x${k}`))
  }
  await pipeline.exec()
}

export const ms = (value) => `${value.toFixed(1)} ms`

/**
 * The same histograms over `durationMs` (at most 10 s) of doing nothing: the stalls this machine's
 * other load causes on its own, to read the figures against (the load average is printed too).
 */
export async function idleFloor(nodes, durationMs) {
  await Promise.all(nodes.map((node) => node.ask('reset')))
  await new Promise((resolve) => setTimeout(resolve, Math.min(durationMs, 10_000)))
  const reports = await Promise.all(nodes.map((node) => node.ask('report')))
  const { loadavg } = await import('node:os')
  return `idle for ${ms(Math.min(durationMs, 10_000))} just after: worst stall ${reports.map((report) => ms(report.maxMs)).join(' / ')}; load average ${loadavg()
    .map((value) => value.toFixed(1))
    .join(' ')}`
}
