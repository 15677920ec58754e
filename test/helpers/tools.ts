/** External tools for the server tests: find them on PATH, run them, and collect their output. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import net from 'node:net'
import path from 'node:path'

/** Whether an executable named `name` is on PATH (tests that need it skip only when it is absent). */
export function hasTool(name: string): boolean {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue
    try {
      accessSync(path.join(dir, name), constants.X_OK)
      return true
    } catch {
      // not in this directory
    }
  }
  return false
}

export interface ToolResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** Runs `command args`, feeding `input` to its stdin, and resolves when it exits. */
export function runTool(
  command: string,
  args: readonly string[],
  input?: string | Buffer,
  timeoutMs = 120_000,
): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] })
    const stdout: Buffer[] = []
    const stderr: Buffer[] = []
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk))
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({
        code,
        signal,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
      })
    })
    child.stdin.on('error', () => {})
    if (input !== undefined) child.stdin.end(input)
    else child.stdin.end()
  })
}

/** A running child whose stdout and stderr accumulate as text, with a way to wait for some of it. */
export class InteractiveTool {
  stdout = ''
  stderr = ''
  exitCode: number | null | undefined = undefined
  private readonly exited: Promise<number | null>

  constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.on('data', (chunk: Buffer) => (this.stdout += chunk.toString('utf8')))
    child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString('utf8')))
    child.stdin.on('error', () => {})
    this.exited = new Promise((resolve) => {
      child.on('close', (code) => {
        this.exitCode = code
        resolve(code)
      })
    })
  }

  static start(command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): InteractiveTool {
    return new InteractiveTool(spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env }))
  }

  /** Waits until `done(stdout + stderr)` holds, or throws with what arrived so far. */
  async waitFor(done: (output: string) => boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!done(this.stdout + this.stderr)) {
      if (Date.now() > deadline) {
        throw new Error(`timed out; stdout: ${JSON.stringify(this.stdout)} stderr: ${JSON.stringify(this.stderr)}`)
      }
      if (this.exitCode !== undefined) {
        throw new Error(
          `exited with ${this.exitCode}; stdout: ${JSON.stringify(this.stdout)} stderr: ${JSON.stringify(this.stderr)}`,
        )
      }
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  /** Writes `line` and its newline to stdin; resolves with the output it gave once that is `length` characters ending in a newline. */
  async answer(line: string, length: number): Promise<string> {
    const before = this.stdout.length
    this.child.stdin.write(line + '\n')
    await this.waitFor(() => this.stdout.length - before >= length && this.stdout.endsWith('\n'))
    return this.stdout.slice(before)
  }

  /** Resolves with the exit code, or kills the child after `timeoutMs` and rejects. */
  async waitExit(timeoutMs = 20_000): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.child.kill('SIGKILL')
        reject(new Error(`did not exit; stdout: ${JSON.stringify(this.stdout)} stderr: ${JSON.stringify(this.stderr)}`))
      }, timeoutMs)
    })
    try {
      return await Promise.race([this.exited, timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  kill(): void {
    if (this.exitCode === undefined) this.child.kill('SIGKILL')
  }
}

/** A TCP port that was free a moment ago (for a server that cannot be told to use port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      )
    })
  })
}

/**
 * Where the first complete RESP2/RESP3 reply in `bytes` ends, or -1 if it has not all arrived.
 * Lets a test read exactly one reply of unknown length from a raw socket.
 */
export function replyEnd(bytes: Buffer, start = 0): number {
  const lineEnd = bytes.indexOf('\r\n', start)
  if (lineEnd < 0) return -1
  const type = String.fromCharCode(bytes[start]!)
  const header = bytes.toString('latin1', start + 1, lineEnd)
  let pos = lineEnd + 2
  switch (type) {
    case '$':
    case '=':
    case '!': {
      const length = Number(header)
      if (length < 0) return pos
      return bytes.length >= pos + length + 2 ? pos + length + 2 : -1
    }
    case '*':
    case '~':
    case '>':
    case '%':
    case '|': {
      const count = Number(header)
      if (count < 0) return pos
      const elements = type === '%' || type === '|' ? count * 2 : count
      for (let i = 0; i < elements; i++) {
        pos = replyEnd(bytes, pos)
        if (pos < 0) return -1
      }
      return pos
    }
    default:
      return pos
  }
}
