/**
 * c10k: opens N connections (default 10,000) to a bfs started as its own process, holds them all
 * open, then has each send PING and BF.EXISTS in one write; reports how many were served and how
 * long connecting and serving took. Run it through bench/c10k.sh, which raises `ulimit -n`.
 *
 *   node c10k.js <path/to/dist/main.js> [connections]
 */
import { spawn } from 'node:child_process'
import net from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'

const WAVE = 500
const PING = Buffer.from('*1\r\n$4\r\nPING\r\n')
const EXISTS = Buffer.from('*3\r\n$9\r\nBF.EXISTS\r\n$4\r\nc10k\r\n$7\r\npresent\r\n')
const EXPECTED = '+PONG\r\n:1\r\n'

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1' }, () => resolve(socket))
    socket.once('error', reject)
  })
}

function ask(socket: net.Socket, request: Buffer, expectedLength: number): Promise<string> {
  return new Promise((resolve) => {
    let received = ''
    const onData = (chunk: Buffer): void => {
      received += chunk.toString('latin1')
      if (received.length >= expectedLength) {
        socket.off('data', onData)
        resolve(received)
      }
    }
    socket.on('data', onData)
    socket.once('close', () => resolve(received))
    socket.write(request)
  })
}

async function main(): Promise<void> {
  const mainJs = process.argv[2]
  const connections = Number(process.argv[3] ?? 10_000)
  if (!mainJs) throw new Error('usage: c10k.js <dist/main.js> [connections]')
  const dir = mkdtempSync(path.join(tmpdir(), 'bfs-c10k-'))
  const server = spawn(
    process.execPath,
    [
      mainJs,
      '--port',
      '0',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      '--maxclients',
      String(connections + 100),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let log = ''
  const port = await new Promise<number>((resolve, reject) => {
    const onOutput = (chunk: Buffer): void => {
      log += chunk.toString()
      const match = /Listening on 127\.0\.0\.1:(\d+)/.exec(log)
      if (match && log.includes('Ready to accept connections')) resolve(Number(match[1]))
    }
    server.stdout.on('data', onOutput)
    server.stderr.on('data', onOutput)
    server.once('exit', (code) => reject(new Error(`bfs exited with ${code}:\n${log}`)))
  })
  try {
    const setup = await connect(port)
    await ask(setup, Buffer.from('*3\r\n$6\r\nBF.ADD\r\n$4\r\nc10k\r\n$7\r\npresent\r\n'), 4)
    setup.destroy()

    const started = performance.now()
    const sockets: net.Socket[] = []
    let failedToConnect = 0
    for (let i = 0; i < connections; i += WAVE) {
      const wave = await Promise.allSettled(
        Array.from({ length: Math.min(WAVE, connections - i) }, () => connect(port)),
      )
      for (const outcome of wave) {
        if (outcome.status === 'fulfilled') sockets.push(outcome.value)
        else failedToConnect++
      }
    }
    const connectedMs = performance.now() - started
    const replies = await Promise.all(
      sockets.map((socket) => ask(socket, Buffer.concat([PING, EXISTS]), EXPECTED.length)),
    )
    const totalMs = performance.now() - started
    const served = replies.filter((reply) => reply === EXPECTED).length
    const rejected = replies.filter((reply) => reply.startsWith('-ERR max number of clients reached')).length
    console.log(
      `c10k: ${connections} connections: ${sockets.length} held open at once (${failedToConnect} failed to connect), ${served} served, ${rejected} rejected`,
    )
    console.log(`c10k: connect ${connectedMs.toFixed(0)} ms, connect + serve all ${totalMs.toFixed(0)} ms`)
    for (const socket of sockets) socket.destroy()
    if (served !== connections) process.exitCode = 1
  } finally {
    server.kill('SIGTERM')
    await new Promise((resolve) => server.once('exit', resolve))
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
