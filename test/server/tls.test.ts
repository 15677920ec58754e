/**
 * The TLS port (tls-port) over real sockets, with certificates made by openssl at test time:
 * redis-cli --tls, ioredis (tls options and a rediss:// URL), node-redis socket.tls, redis-py
 * ssl=True, every kind of client session (RESP2/3, pipelining, AUTH, MONITOR, pub/sub, CLIENT
 * LIST, INFO), client certificates under each tls-auth-clients, plaintext bytes on the TLS port,
 * and a renewed certificate taken by CONFIG SET.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import tls from 'node:tls'
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { makeTestCerts, serverTlsConfig, type TestCerts } from '../helpers/tls-certs.js'
import { RawClient, ask, encodeCommand, exchange } from '../helpers/resp.js'
import { nodeHasReusePort } from '../../src/runtime/io-threads-setting.js'
import { freePort, hasTool, runTool } from '../helpers/tools.js'
import type { Config } from '../../src/runtime/config.js'

let certs: TestCerts

beforeAll(async () => {
  certs = await makeTestCerts()
}, 60_000)

afterAll(() => certs?.remove())

const tlsConfig = (extra: Partial<Config> = {}): Partial<Config> => serverTlsConfig(certs, extra)

/** A client's TLS options: the CA, and the client certificate unless `cert` is false or another pair. */
function clientTls(
  cert: false | { cert: string; key: string } = { cert: certs.clientCert, key: certs.clientKey },
): tls.ConnectionOptions {
  return {
    ca: readFileSync(certs.caCert),
    ...(cert === false ? {} : { cert: readFileSync(cert.cert), key: readFileSync(cert.key) }),
  }
}

/** Whether a TLS client is served: PONG to PING, or the error / closed connection that refused it. */
async function pingOverTls(port: number, options: tls.ConnectionOptions): Promise<string> {
  let client: RawClient
  try {
    client = await RawClient.connectTls(port, options)
  } catch (error) {
    return `refused: ${(error as Error).message}`
  }
  try {
    client.write(encodeCommand(['PING']))
    const reply = (await client.readUntil((bytes) => bytes.includes('\r\n'))).toString('latin1')
    return reply === '' ? 'refused: closed' : reply
  } finally {
    client.close()
  }
}

/** A python3 that has the redis package (Debian's python3-redis), or undefined. */
async function pythonWithRedis(): Promise<string | undefined> {
  for (const python of ['python3', '/usr/bin/python3']) {
    if (!hasTool(python) && !python.startsWith('/')) continue
    const found = await runTool(python, ['-c', 'import redis']).catch(() => undefined)
    if (found?.code === 0) return python
  }
  return undefined
}

describe('tls-port: clients', () => {
  let bfs: RunningServer
  let tlsPort: number

  beforeAll(async () => {
    bfs = await startServer({ ...tlsConfig(), port: await freePort() })
    tlsPort = bfs.server.tlsPort
  })
  afterAll(() => bfs?.stop())

  it('listens on both ports, and logs the TLS one', () => {
    expect(tlsPort).toBeGreaterThan(0)
    expect(bfs.port).toBeGreaterThan(0)
    expect(bfs.logs.join('\n')).toContain(`Listening on 127.0.0.1:${tlsPort} (TLS)`)
  })

  it('redis-cli --tls --cacert --cert --key runs commands', async () => {
    const args = [
      '-p',
      String(tlsPort),
      '--tls',
      '--cacert',
      certs.caCert,
      '--cert',
      certs.clientCert,
      '--key',
      certs.clientKey,
    ]
    expect((await runTool('redis-cli', [...args, 'BF.ADD', 'cli', 'a'])).stdout.trim()).toBe('1')
    expect((await runTool('redis-cli', [...args, 'BF.EXISTS', 'cli', 'a'])).stdout.trim()).toBe('1')
    expect((await runTool('redis-cli', [...args, 'INFO', 'server'])).stdout).toContain('redis_version:7.0.15')
  })

  it('ioredis with tls options and with a rediss:// URL', async () => {
    const options = clientTls() as { ca: Buffer; cert: Buffer; key: Buffer }
    const a = new Redis({ port: tlsPort, host: '127.0.0.1', tls: options, maxRetriesPerRequest: 0 })
    const b = new Redis(`rediss://127.0.0.1:${tlsPort}`, { tls: options, maxRetriesPerRequest: 0 })
    try {
      expect(await a.call('BF.ADD', 'io', 'x')).toBe(1)
      const pipeline = b.pipeline()
      for (let i = 0; i < 200; i++) pipeline.call('BF.ADD', 'io', `item-${i}`)
      pipeline.call('BF.EXISTS', 'io', 'x')
      const replies = (await pipeline.exec())!
      expect(replies).toHaveLength(201)
      expect(replies.every(([error]) => error === null)).toBe(true)
      expect(replies[200]![1]).toBe(1)
    } finally {
      a.disconnect()
      b.disconnect()
    }
  })

  it('node-redis with socket.tls', async () => {
    const { ca, cert, key } = clientTls() as { ca: Buffer; cert: Buffer; key: Buffer }
    const client = createClient({
      socket: { host: '127.0.0.1', port: tlsPort, tls: true, ca, cert, key, reconnectStrategy: false },
    })
    client.on('error', () => {})
    await client.connect()
    try {
      expect(await client.sendCommand(['BF.MADD', 'node', 'a', 'b'])).toEqual([1, 1])
      expect(await client.sendCommand(['BF.EXISTS', 'node', 'b'])).toBe(1)
    } finally {
      await client.disconnect()
    }
  })

  it('redis-py with ssl=True', async () => {
    const python = await pythonWithRedis()
    if (python === undefined) {
      // Only where Debian's python3-redis is not installed (.ci/run installs it).
      console.warn('redis-py (python3-redis) is not installed: the redis-py check did not run')
      return
    }
    const script = [
      'import redis, sys',
      `r = redis.Redis(host="127.0.0.1", port=${tlsPort}, ssl=True, ssl_ca_certs=sys.argv[1], ssl_certfile=sys.argv[2], ssl_keyfile=sys.argv[3])`,
      'print(r.execute_command("BF.ADD", "py", "x"), r.execute_command("BF.EXISTS", "py", "x"), r.ping())',
    ].join('\n')
    const result = await runTool(python, ['-c', script, certs.caCert, certs.clientCert, certs.clientKey])
    expect(result.stderr).toBe('')
    expect(result.stdout.trim()).toBe('1 1 True')
  })

  it('RESP3, pipelining, CLIENT LIST with the fields of a plaintext client', async () => {
    const secure = await RawClient.connectTls(tlsPort, clientTls())
    const plain = await RawClient.connect(bfs.port)
    try {
      secure.write(
        Buffer.concat([encodeCommand(['HELLO', '3']), encodeCommand(['PING']), encodeCommand(['BF.ADD', 'r3', 'a'])]),
      )
      const replies = (await secure.readUntil((bytes) => bytes.includes('+PONG\r\n:1\r\n'))).toString('latin1')
      expect(replies.startsWith('%7\r\n')).toBe(true)
      expect(replies.endsWith('+PONG\r\n:1\r\n')).toBe(true)
      const list = async (client: RawClient) => {
        client.write(encodeCommand(['CLIENT', 'INFO']))
        const text = (await client.readUntil((bytes) => bytes.toString('latin1').endsWith('\n\r\n'))).toString('latin1')
        // RESP3 answers a verbatim string (txt:...).
        return text
          .slice(text.indexOf('\r\n') + 2)
          .replace(/^txt:/, '')
          .trim()
          .split(' ')
          .map((field) => field.split('=')[0])
      }
      expect(await list(secure)).toEqual(await list(plain))
    } finally {
      secure.close()
      plain.close()
    }
  })

  it('pub/sub and MONITOR over TLS', async () => {
    const subscriber = await RawClient.connectTls(tlsPort, clientTls())
    const monitor = await RawClient.connectTls(tlsPort, clientTls())
    const publisher = await RawClient.connect(bfs.port)
    try {
      await exchange(subscriber, [['SUBSCRIBE', 'news']], '*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n')
      await exchange(monitor, [['MONITOR']], '+OK\r\n')
      await exchange(publisher, [['PUBLISH', 'news', 'hello']], ':1\r\n')
      expect((await subscriber.read('*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$5\r\nhello\r\n'.length)).toString()).toBe(
        '*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$5\r\nhello\r\n',
      )
      expect((await monitor.readUntil((bytes) => bytes.includes('"PUBLISH" "news" "hello"'))).toString()).toContain(
        '"PUBLISH" "news" "hello"',
      )
    } finally {
      subscriber.close()
      monitor.close()
      publisher.close()
    }
  })

  it('plaintext bytes sent to the TLS port are refused, and the server goes on', async () => {
    const plain = await RawClient.connect(tlsPort)
    plain.write(encodeCommand(['PING']))
    await plain.waitClosed()
    expect(await pingOverTls(tlsPort, clientTls())).toBe('+PONG\r\n')
    expect(bfs.logs.join('\n')).toMatch(/Error accepting a client connection: .*wrong version number/)
  })
})

describe('tls-port: client certificates', () => {
  let bfs: RunningServer
  let tlsPort: number

  beforeAll(async () => {
    // port 0 beside tls-port: no plaintext listener, as in Redis.
    bfs = await startServer(tlsConfig({ requirepass: 'secret' }))
    tlsPort = bfs.server.tlsPort
  })
  afterAll(() => bfs?.stop())

  it('port 0 beside tls-port opens no plaintext port', () => {
    expect(bfs.port).toBe(0)
    expect(bfs.logs.join('\n')).not.toMatch(/Listening on 127\.0\.0\.1:\d+$/m)
  })

  it('AUTH still applies to a client with a certificate', async () => {
    const client = await RawClient.connectTls(tlsPort, clientTls())
    try {
      expect(await exchange(client, [['PING']], '-NOAUTH Authentication required.\r\n')).toBe(
        '-NOAUTH Authentication required.\r\n',
      )
      expect(await exchange(client, [['AUTH', 'secret'], ['PING']], '+OK\r\n+PONG\r\n')).toBe('+OK\r\n+PONG\r\n')
    } finally {
      client.close()
    }
  })

  it('tls-auth-clients yes: no certificate or an untrusted one is refused; no and optional as Redis', async () => {
    const untrusted = { cert: certs.untrustedCert, key: certs.untrustedKey }
    const auth = async (command: string[]) => {
      const client = await RawClient.connectTls(tlsPort, clientTls())
      try {
        return await exchange(client, [['AUTH', 'secret'], command], '+OK\r\n+OK\r\n')
      } finally {
        client.close()
      }
    }
    expect(await pingOverTls(tlsPort, clientTls(false))).toMatch(/^refused/)
    expect(await pingOverTls(tlsPort, clientTls(untrusted))).toMatch(/^refused/)
    expect(await pingOverTls(tlsPort, clientTls())).toContain('NOAUTH')
    expect(bfs.logs.join('\n')).toMatch(
      /Error accepting a client connection: .*(peer did not return a certificate|certificate required)/,
    )
    expect(bfs.logs.join('\n')).toMatch(/Error accepting a client connection: certificate verify failed/)

    expect(await auth(['CONFIG', 'SET', 'tls-auth-clients', 'no'])).toBe('+OK\r\n+OK\r\n')
    expect(await pingOverTls(tlsPort, clientTls(false))).toContain('NOAUTH')

    expect(await auth(['CONFIG', 'SET', 'tls-auth-clients', 'optional'])).toBe('+OK\r\n+OK\r\n')
    expect(await pingOverTls(tlsPort, clientTls(false))).toContain('NOAUTH')
    expect(await pingOverTls(tlsPort, clientTls())).toContain('NOAUTH')
    expect(await pingOverTls(tlsPort, clientTls(untrusted))).toMatch(/^refused/)

    expect(await auth(['CONFIG', 'SET', 'tls-auth-clients', 'yes'])).toBe('+OK\r\n+OK\r\n')
    expect(await pingOverTls(tlsPort, clientTls(false))).toMatch(/^refused/)
  })
})

describe.runIf(nodeHasReusePort(process.version))('tls-port on the I/O threads', () => {
  it("is served by every I/O thread, with or without a plaintext port: a TLS client's checks and adds are answered by its thread", async () => {
    for (const plaintext of [true, false]) {
      const bfs = await startServer({ ...tlsConfig(), port: plaintext ? await freePort() : 0, 'io-threads': 3 })
      const client = await RawClient.connectTls(bfs.server.tlsPort, clientTls())
      const admin = await RawClient.connectTls(bfs.server.tlsPort, clientTls())
      try {
        const tlsPort = bfs.server.tlsPort
        expect(tlsPort).toBeGreaterThan(0)
        expect(bfs.logs.join('\n')).toContain(
          `2 I/O threads serve ${plaintext ? `port ${bfs.port} and ` : ''}tls-port ${tlsPort} and answer`,
        )
        expect(bfs.logs.join('\n')).toContain(`Listening on 127.0.0.1:${tlsPort} (TLS)`)
        expect(await ask(client, 'BF.RESERVE', 'secure', '0.01', '1000')).toBe('+OK\r\n')
        const threaded = async (): Promise<number> =>
          Number(/bfs_io_threaded_commands_processed:(\d+)/.exec(await ask(admin, 'INFO', 'stats'))![1])
        // The first checks teach the thread the filter's layout; then it answers them itself.
        let answered = false
        for (let i = 0; i < 200 && !answered; i++) {
          const before = await threaded()
          expect(await ask(client, 'BF.EXISTS', 'secure', 'warm')).toBe(':0\r\n')
          answered = (await threaded()) > before
        }
        expect(answered).toBe(true)
        const before = await threaded()
        expect(await ask(client, 'BF.ADD', 'secure', 'a')).toBe(':1\r\n')
        expect(await ask(client, 'BF.EXISTS', 'secure', 'a')).toBe(':1\r\n')
        expect((await threaded()) - before).toBe(2)
        expect(await ask(admin, 'CLIENT', 'LIST')).toContain('cmd=bf.exists')
      } finally {
        client.close()
        admin.close()
        await bfs.stop()
      }
    }
  })
})
