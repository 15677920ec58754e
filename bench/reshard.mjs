#!/usr/bin/env node
/**
 * `redis-cli --cluster reshard` between two bfs nodes in cluster mode on this machine: node A owns
 * every slot, node B none; A holds one filter of about sizeMiB and 1,000 small filters (BF.RESERVE
 * 0.01 1000, 10 items each), all named so that they hash to slots 0-127; the reshard moves those
 * 128 slots to B (redis-cli: SETSLOT IMPORTING/MIGRATING, GETKEYSINSLOT 10, MIGRATE ... KEYS,
 * SETSLOT NODE, per slot). Prints its time and the worst event-loop stall of each node
 * (bench/migrate-node.mjs), then checks B's keys.
 *
 *   npm run build && node bench/reshard.mjs [sizeMiB=1024]
 */
import { spawn } from 'node:child_process'
import Redis from 'ioredis'
import { slotOf } from '../dist/core/key-slot.js'
import { bigFilter, idleFloor, ms, smallFilters, startNode, stopNodes } from './migrate-nodes.mjs'

const sizeMiB = Number(process.argv[2] ?? 1024)
const SLOTS = 128

function run(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    child.on('exit', (code) => resolve({ code, output }))
  })
}

/** Names hashing to slots 0 .. SLOTS-1. */
function namesInFirstSlots(prefix, count) {
  const names = []
  for (let i = 0; names.length < count; i++) if (slotOf(`${prefix}${i}`) < SLOTS) names.push(`${prefix}${i}`)
  return names
}

const [nodeA, nodeB] = [startNode(27631, true), startNode(27632, true)]
await Promise.all([nodeA.ready, nodeB.ready])
const a = new Redis(nodeA.port)
const b = new Redis(nodeB.port)
try {
  await a.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383')
  await a.call('CLUSTER', 'SET-CONFIG-EPOCH', '1')
  await b.call('CLUSTER', 'MEET', '127.0.0.1', String(nodeA.port))
  for (;;) {
    const check = await run('redis-cli', ['--cluster', 'check', `127.0.0.1:${nodeA.port}`])
    const states = await Promise.all(
      [a, b].map(async (client) => String(await client.call('CLUSTER', 'INFO')).includes('cluster_state:ok')),
    )
    if (
      check.code === 0 &&
      !check.output.includes('[ERR]') &&
      !check.output.includes('[WARNING]') &&
      states.every(Boolean)
    )
      break
    await new Promise((resolve) => setTimeout(resolve, 300))
  }
  const big = namesInFirstSlots('big:', 1)[0]
  const size = await bigFilter(a, big, sizeMiB)
  await smallFilters(a, namesInFirstSlots('small:', 1000))
  const [idA, idB] = [String(await a.call('CLUSTER', 'MYID')), String(await b.call('CLUSTER', 'MYID'))]
  await Promise.all([nodeA.ask('reset'), nodeB.ask('reset')])
  const started = performance.now()
  const reshard = await run('redis-cli', [
    '--cluster',
    'reshard',
    `127.0.0.1:${nodeA.port}`,
    '--cluster-from',
    idA,
    '--cluster-to',
    idB,
    '--cluster-slots',
    String(SLOTS),
    '--cluster-yes',
    '--cluster-timeout',
    '600000',
  ])
  const elapsed = performance.now() - started
  const [stallA, stallB] = await Promise.all([nodeA.ask('report'), nodeB.ask('report')])
  if (reshard.code !== 0) console.log(reshard.output.split('\n').slice(-20).join('\n'))
  console.log(
    `reshard of ${SLOTS} slots holding 1 filter of ${(size / 2 ** 20).toFixed(0)} MiB and 1,000 small ones: rc ${reshard.code} in ${ms(elapsed)}; ` +
      `worst stall source ${ms(stallA.maxMs)}, target ${ms(stallB.maxMs)}; target DBSIZE ${await b.dbsize()}, source DBSIZE ${await a.dbsize()}, ` +
      `items on the target ${await b.call('BF.MEXISTS', big, 'item:0', 'item:99999')}`,
  )
  console.log(`  ${await idleFloor([nodeA, nodeB], elapsed)}`)
} finally {
  a.disconnect()
  b.disconnect()
  await stopNodes([nodeA, nodeB])
}
