/**
 * bfs started as redis-server is deployed (real processes, dist/main.js): with redis 7.0.15's own
 * redis.conf and Debian's, and each process directive bfs implements: pidfile, unixsocket with
 * unixsocketperm, daemonize, supervised systemd (READY=1 and STOPPING=1 on a datagram socket),
 * and protected mode refusing a client that is not on loopback.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeTempDir } from '../helpers/temp-dir.js'
import { encodeCommand } from '../helpers/resp.js'
import { InteractiveTool, hasTool, replyEnd, runTool } from '../helpers/tools.js'
import { BFS_MAIN, startChildServer, testIoThreadsArgs } from '../helpers/child-server.js'
// @ts-expect-error: a plain .mjs build script, without type declarations
import { staleReason } from '../../scripts/start.mjs'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** The flags of a bfs with no persistence in `data` on any free port, then `more`. */
function plainFlags(data: string, ...more: string[]): string[] {
  return ['--port', '0', '--dir', data, '--save', '', '--appendonly', 'no', ...more]
}

/** plainFlags as a whole command line of the built server. */
function plainServerArgs(data: string, ...more: string[]): string[] {
  return [BFS_MAIN, ...testIoThreadsArgs(), ...plainFlags(data, ...more)]
}

const FIXTURES = ['redis-7.0.15.conf', 'redis-7.0.15-debian.conf'].map((name) =>
  path.join(ROOT, 'test', 'fixtures', name),
)

let dir: string
beforeAll(() => {
  // `npm test` builds first (pretest); when vitest runs alone, build once here.
  if (!existsSync(BFS_MAIN)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'pipe' })
  dir = makeTempDir('bfs-redis-conf-')
}, 120_000)

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

/** A fresh directory under the file's temporary one. */
let count = 0
function subdir(): string {
  const sub = path.join(dir, String(count++))
  execFileSync('mkdir', ['-p', sub])
  return sub
}

/** Sends one command on `socket` and resolves with its reply's text (the socket is then closed). */
function askSocket(options: net.NetConnectOpts, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(options)
    let bytes = Buffer.alloc(0)
    socket.on('connect', () => socket.write(encodeCommand(args)))
    socket.on('data', (chunk: Buffer) => {
      bytes = Buffer.concat([bytes, chunk])
      if (replyEnd(bytes) === bytes.length) {
        socket.destroy()
        resolve(bytes.toString('latin1'))
      }
    })
    socket.on('error', reject)
    socket.on('close', () => resolve(bytes.toString('latin1')))
  })
}

async function ask(port: number, args: string[]): Promise<string> {
  return askSocket({ port, host: '127.0.0.1' }, args)
}

/** Resolves once `check()` holds (polled), or rejects after `timeoutMs`. */
async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe.each(FIXTURES.map((file) => [path.basename(file), file] as const))('bfs started with %s', (_name, file) => {
  it('with port, dir, logfile, pidfile and daemonize overridden on the command line: answers, warns once, exits 0', async () => {
    const data = subdir()
    const pidfile = path.join(data, 'bfs.pid')
    const { bfs, port } = await startChildServer([
      file,
      '--port',
      '0',
      '--dir',
      data,
      '--logfile',
      '',
      '--pidfile',
      pidfile,
      '--daemonize',
      'no',
    ])
    try {
      expect(await ask(port, ['PING'])).toBe('+PONG\r\n')
      expect(await ask(port, ['CONFIG', 'GET', 'bind'])).toBe('*2\r\n$4\r\nbind\r\n$14\r\n127.0.0.1 -::1\r\n')
      const output = bfs.stdout + bfs.stderr
      expect(output.match(/Ignoring redis\.conf directives bfs has no use for: /g)).toHaveLength(1)
      expect(output).toMatch(/dbfilename.*rdbcompression.*aof-use-rdb-preamble/)
      expect(readFileSync(pidfile, 'utf8')).toBe(`${bfs.child.pid}\n`)
    } finally {
      bfs.child.kill('SIGTERM')
    }
    expect(await bfs.waitExit()).toBe(0)
  })
})

describe('the process directives', () => {
  it('pidfile: written with the pid at start, removed at a clean exit (SHUTDOWN too)', async () => {
    const data = subdir()
    const pidfile = path.join(data, 'bfs.pid')
    const { bfs, port } = await startChildServer(plainFlags(data, '--pidfile', pidfile))
    expect(readFileSync(pidfile, 'utf8')).toBe(`${bfs.child.pid}\n`)
    expect(await ask(port, ['CONFIG', 'GET', 'pidfile'])).toBe(
      `*2\r\n$7\r\npidfile\r\n$${pidfile.length}\r\n${pidfile}\r\n`,
    )
    await ask(port, ['SHUTDOWN'])
    expect(await bfs.waitExit()).toBe(0)
    expect(existsSync(pidfile)).toBe(false)
  })

  it('unixsocket with unixsocketperm: listens there too, with those permissions, its clients local and named by its path; the file goes at exit', async () => {
    const data = subdir()
    const socketPath = path.join(data, 'bfs.sock')
    const { bfs, port } = await startChildServer(
      plainFlags(data, '--unixsocket', socketPath, '--unixsocketperm', '700', '--enable-debug-command', 'local'),
    )
    try {
      const stat = statSync(socketPath)
      expect(stat.isSocket()).toBe(true)
      expect(stat.mode & 0o777).toBe(0o700)
      expect(await askSocket({ path: socketPath }, ['PING'])).toBe('+PONG\r\n')
      expect(await askSocket({ path: socketPath }, ['BF.ADD', 'f', 'a'])).toBe(':1\r\n')
      // As redis: both ends named by the socket's path, flag U, and local (DEBUG with enable-debug-command local).
      const info = await askSocket({ path: socketPath }, ['CLIENT', 'INFO'])
      expect(info).toContain(` addr=${socketPath}:0 laddr=${socketPath}:0 `)
      expect(info).toContain(' flags=U ')
      expect(await askSocket({ path: socketPath }, ['DEBUG', 'SLEEP', '0'])).toBe('+OK\r\n')
      expect(await ask(port, ['BF.EXISTS', 'f', 'a'])).toBe(':1\r\n')
      expect(await ask(port, ['CONFIG', 'GET', 'unixsocketperm'])).toBe('*2\r\n$14\r\nunixsocketperm\r\n$3\r\n700\r\n')
      if (hasTool('redis-cli')) {
        const result = await runTool('redis-cli', ['-s', socketPath, 'PING'])
        expect(result.stdout).toBe('PONG\n')
      }
    } finally {
      bfs.child.kill('SIGTERM')
    }
    expect(await bfs.waitExit()).toBe(0)
    expect(existsSync(socketPath)).toBe(false)
  })

  it('bind: an address the machine lacks is skipped when marked `-` (as redis), and stops the start when not', async () => {
    // 203.0.113.0/24 is TEST-NET-3: documentation only, on no machine's interface.
    const data = subdir()
    const { bfs, port } = await startChildServer([
      '--port',
      '0',
      '--bind',
      '127.0.0.1',
      '-203.0.113.77',
      '--dir',
      data,
      '--save',
      '',
      '--appendonly',
      'no',
    ])
    try {
      expect(await ask(port, ['PING'])).toBe('+PONG\r\n')
    } finally {
      bfs.child.kill('SIGTERM')
    }
    expect(await bfs.waitExit()).toBe(0)
    const result = await runTool(process.execPath, [
      BFS_MAIN,
      ...testIoThreadsArgs(),
      '--port',
      '0',
      '--bind',
      '127.0.0.1',
      '203.0.113.77',
      '--dir',
      data,
      '--save',
      '',
      '--appendonly',
      'no',
    ])
    expect(result.code).toBe(1)
    expect(result.stdout + result.stderr).toContain('EADDRNOTAVAIL')
  })

  it('daemonize yes: the command returns 0 at once, the server runs on in the background until stopped by its pidfile', async () => {
    const data = subdir()
    const pidfile = path.join(data, 'bfs.pid')
    const socketPath = path.join(data, 'bfs.sock')
    const logfile = path.join(data, 'bfs.log')
    const result = await runTool(
      process.execPath,
      plainServerArgs(
        data,
        '--daemonize',
        'yes',
        '--pidfile',
        pidfile,
        '--unixsocket',
        socketPath,
        '--logfile',
        logfile,
      ),
      undefined,
      30_000,
    )
    expect(result.code).toBe(0)
    const pid = Number(readFileSync(pidfile, 'utf8'))
    expect(alive(pid)).toBe(true)
    try {
      expect(await askSocket({ path: socketPath }, ['PING'])).toBe('+PONG\r\n')
      expect(await askSocket({ path: socketPath }, ['CONFIG', 'GET', 'daemonize'])).toBe(
        '*2\r\n$9\r\ndaemonize\r\n$3\r\nyes\r\n',
      )
    } finally {
      process.kill(pid, 'SIGTERM')
    }
    await until(() => !alive(pid), 'the background server to exit')
    expect(existsSync(pidfile)).toBe(false)
    expect(readFileSync(logfile, 'utf8')).toContain('bfs is now ready to exit')
  })

  it('daemonize yes: a server that cannot start makes the command fail with the reason', async () => {
    const blocker = net.createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    const taken = (blocker.address() as net.AddressInfo).port
    try {
      const data = subdir()
      const result = await runTool(
        process.execPath,
        [
          BFS_MAIN,
          ...testIoThreadsArgs(),
          '--port',
          String(taken),
          '--dir',
          data,
          '--daemonize',
          'yes',
          '--pidfile',
          path.join(data, 'bfs.pid'),
        ],
        undefined,
        30_000,
      )
      expect(result.code).toBe(1)
      expect(result.stderr).toContain('EADDRINUSE')
      expect(existsSync(path.join(data, 'bfs.pid'))).toBe(false)
    } finally {
      blocker.close()
    }
  })
})

describe('npm start', () => {
  it('with a current build, starts the server without building (same node flags), and it answers', async () => {
    // What the README's start does once `npm install` (prepare) has built.
    if (staleReason(ROOT) !== undefined) execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'pipe' })
    const data = subdir()
    const npm = InteractiveTool.start('npm', [
      'start',
      '--prefix',
      ROOT,
      '--silent',
      '--',
      ...testIoThreadsArgs(),
      '--port',
      '0',
      '--dir',
      data,
      '--save',
      '',
      '--appendonly',
      'no',
    ])
    try {
      await npm.waitFor((output) => output.includes('Ready to accept connections'))
      const port = Number(/Listening on 127\.0\.0\.1:(\d+)/.exec(npm.stdout)![1])
      expect(await ask(port, ['PING'])).toBe('+PONG\r\n')
      expect(npm.stdout + npm.stderr).not.toContain('building')
      const pid = Number(/^(\d+):M /m.exec(npm.stdout)![1])
      expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')).toEqual(
        expect.arrayContaining(['--max-semi-space-size=1', '--optimize-for-size', 'scripts/start.mjs']),
      )
      expect(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')).toContain(
        'GLIBC_TUNABLES=glibc.malloc.mmap_threshold=16384',
      )
      await ask(port, ['SHUTDOWN', 'NOSAVE'])
      expect(await npm.waitExit()).toBe(0)
    } finally {
      npm.kill()
    }
  })
})

/** A Unix datagram socket that prints each message it gets, one line each (newlines as |). */
const RECEIVER = `
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print('bound', flush=True)
while True:
    print(s.recv(4096).decode().replace('\\n', '|'), flush=True)
`

describe.skipIf(!hasTool('python3') || !hasTool('systemd-notify'))('supervised systemd', () => {
  it.each(['systemd', 'auto'])(
    'supervised %s: READY=1 once listening, STOPPING=1 at shutdown, on $NOTIFY_SOCKET (daemonize ignored)',
    async (mode) => {
      const data = subdir()
      const notifySocket = path.join(data, 'notify.sock')
      const receiver = InteractiveTool.start('python3', ['-c', RECEIVER, notifySocket])
      let bfs: InteractiveTool | undefined
      try {
        await receiver.waitFor((output) => output.includes('bound'))
        bfs = InteractiveTool.start(
          process.execPath,
          plainServerArgs(data, '--supervised', mode, '--daemonize', 'yes'),
          { ...process.env, NOTIFY_SOCKET: notifySocket },
        )
        await bfs.waitFor((output) => output.includes('Ready to accept connections'))
        await receiver.waitFor((output) => output.includes('READY=1'))
        expect(receiver.stdout).toContain('READY=1|STATUS=Ready to accept connections')
        expect(receiver.stdout).not.toContain('STOPPING=1')
        const port = Number(/Listening on 127\.0\.0\.1:(\d+)/.exec(bfs.stdout)![1])
        expect(await ask(port, ['PING'])).toBe('+PONG\r\n')
        bfs.child.kill('SIGTERM')
        expect(await bfs.waitExit()).toBe(0)
        await receiver.waitFor((output) => output.includes('STOPPING=1'))
      } finally {
        bfs?.kill()
        receiver.kill()
      }
    },
  )

  it('without systemd-notify on PATH: one warning, and the server runs on', async () => {
    const data = subdir()
    const bfs = InteractiveTool.start(process.execPath, plainServerArgs(data, '--supervised', 'systemd'), {
      ...process.env,
      NOTIFY_SOCKET: path.join(data, 'nobody.sock'),
      PATH: path.join(data, 'empty'),
    })
    try {
      await bfs.waitFor((output) => output.includes('Cannot tell systemd READY=1'))
      const port = Number(/Listening on 127\.0\.0\.1:(\d+)/.exec(bfs.stdout)![1])
      expect(await ask(port, ['PING'])).toBe('+PONG\r\n')
    } finally {
      bfs.child.kill('SIGTERM')
    }
    expect(await bfs.waitExit()).toBe(0)
  })
})

describe('supervised upstart', () => {
  it("with UPSTART_JOB set: the server stops itself (SIGSTOP) once listening, for upstart's `expect stop`, and runs on after SIGCONT", async () => {
    const data = subdir()
    const bfs = InteractiveTool.start(process.execPath, plainServerArgs(data, '--supervised', 'upstart'), {
      ...process.env,
      UPSTART_JOB: 'bfs',
    })
    try {
      await bfs.waitFor((output) => output.includes('supervised by upstart, will stop to signal readiness.'))
      const state = (): string => readFileSync(`/proc/${bfs.child.pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0]!
      await until(() => state() === 'T', 'the server to stop itself')
      bfs.child.kill('SIGCONT')
      const port = Number(/Listening on 127\.0\.0\.1:(\d+)/.exec(bfs.stdout)![1])
      expect(await ask(port, ['PING'])).toBe('+PONG\r\n')
    } finally {
      bfs.child.kill('SIGTERM')
    }
    expect(await bfs.waitExit()).toBe(0)
  })
})

/**
 * A client that is not local to redis 7.0.15's protected mode, which takes only 127.0.0.1, ::1 and
 * the Unix socket for local: one connecting from 127.0.0.2 (still loopback, so the traffic never
 * leaves the machine).
 */
const outside = { host: '127.0.0.1', localAddress: '127.0.0.2' }

describe('protected mode', () => {
  it("refuses a client that is not local (from 127.0.0.2) with redis 7.0.15's -DENIED text while there is no password; CONFIG SET protected-mode no lets it in", async () => {
    const data = subdir()
    const { bfs, port } = await startChildServer(['--port', '0', '--dir', data, '--save', '', '--appendonly', 'no'])
    try {
      const denied = await askSocket({ port, ...outside }, ['PING'])
      expect(denied).toBe(`-${REDIS_DENIED}\r\n`)
      expect(await ask(port, ['PING'])).toBe('+PONG\r\n')
      expect(await ask(port, ['INFO', 'stats'])).toContain('rejected_connections:1\r\n')
      expect(await ask(port, ['CONFIG', 'SET', 'protected-mode', 'no'])).toBe('+OK\r\n')
      expect(await askSocket({ port, ...outside }, ['PING'])).toBe('+PONG\r\n')
      // With a password for the default user, protected mode lets it in too (to AUTH).
      expect(await ask(port, ['CONFIG', 'SET', 'protected-mode', 'yes'])).toBe('+OK\r\n')
      expect(await ask(port, ['CONFIG', 'SET', 'requirepass', 'pw'])).toBe('+OK\r\n')
      expect(await askSocket({ port, ...outside }, ['PING'])).toBe('-NOAUTH Authentication required.\r\n')
    } finally {
      bfs.child.kill('SIGTERM')
    }
    expect(await bfs.waitExit()).toBe(0)
  })
})

/** redis 7.0.15 networking.c's text, as the redis-server binary holds it. */
const REDIS_DENIED =
  "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside."
