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
import { fork, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Redis from 'ioredis'
import { slotOf } from '../dist/core/key-slot.js'

const sizeMiB = Number(process.argv[2] ?? 1024)
const here = path.dirname(fileURLToPath(import.meta.url))
const SLOTS = 128

function startNode(port) {
  const dir = mkdtempSync(path.join(tmpdir(), 'bfs-reshard-bench-'))
  const child = fork(path.join(here, 'migrate-node.mjs'), [String(port), dir, 'cluster'], { stdio: 'inherit' })
  const ask = (message) => new Promise((resolve) => {
    child.once('message', resolve)
    child.send(message)
  })
  const ready = new Promise((resolve) => child.once('message', resolve))
  return { child, dir, ask, ready, port }
}

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

const ms = (value) => `${value.toFixed(1)} ms`
const [nodeA, nodeB] = [startNode(27631), startNode(27632)]
await Promise.all([nodeA.ready, nodeB.ready])
const a = new Redis(nodeA.port)
const b = new Redis(nodeB.port)
try {
  await a.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383')
  await a.call('CLUSTER', 'SET-CONFIG-EPOCH', '1')
  await b.call('CLUSTER', 'MEET', '127.0.0.1', String(nodeA.port))
  for (;;) {
    const check = await run('redis-cli', ['--cluster', 'check', `127.0.0.1:${nodeA.port}`])
    if (check.code === 0 && !check.output.includes('[ERR]') && !check.output.includes('[WARNING]')) break
    await new Promise((resolve) => setTimeout(resolve, 300))
  }
  const bitsPerItem = -Math.log(0.005) / (Math.LN2 * Math.LN2)
  const big = namesInFirstSlots('big:', 1)[0]
  await a.call('BF.RESERVE', big, '0.01', String(Math.floor((sizeMiB * 1024 * 1024 * 8) / bitsPerItem)))
  for (let i = 0; i < 100_000; i += 1000) await a.call('BF.MADD', big, ...Array.from({ length: 1000 }, (_, k) => `item:${i + k}`))
  const pipeline = a.pipeline()
  for (const name of namesInFirstSlots('small:', 1000)) {
    pipeline.call('BF.RESERVE', name, '0.01', '1000')
    pipeline.call('BF.MADD', name, ...Array.from({ length: 10 }, (_, k) => `x${k}`))
  }
  await pipeline.exec()
  const size = Number(await a.call('BF.INFO', big, 'SIZE'))
  const [idA, idB] = [String(await a.call('CLUSTER', 'MYID')), String(await b.call('CLUSTER', 'MYID'))]
  await Promise.all([nodeA.ask('reset'), nodeB.ask('reset')])
  const started = performance.now()
  const reshard = await run('redis-cli', ['--cluster', 'reshard', `127.0.0.1:${nodeA.port}`, '--cluster-from', idA, '--cluster-to', idB,
    '--cluster-slots', String(SLOTS), '--cluster-yes', '--cluster-timeout', '600000'])
  const elapsed = performance.now() - started
  const [stallA, stallB] = await Promise.all([nodeA.ask('report'), nodeB.ask('report')])
  if (reshard.code !== 0) console.log(reshard.output.split('\n').slice(-20).join('\n'))
  console.log(`reshard of ${SLOTS} slots holding 1 filter of ${(size / 2 ** 20).toFixed(0)} MiB and 1,000 small ones: rc ${reshard.code} in ${ms(elapsed)}; ` +
    `worst stall source ${ms(stallA.maxMs)}, target ${ms(stallB.maxMs)}; target DBSIZE ${await b.dbsize()}, source DBSIZE ${await a.dbsize()}, ` +
    `items on the target ${await b.call('BF.MEXISTS', big, 'item:0', 'item:99999')}`)
} finally {
  a.disconnect()
  b.disconnect()
  for (const node of [nodeA, nodeB]) {
    node.child.send('stop')
    await new Promise((resolve) => node.child.once('exit', resolve))
    rmSync(node.dir, { recursive: true, force: true })
  }
}
