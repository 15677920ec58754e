/**
 * The docs' TypeScript examples are what a newcomer copies first: every ```ts block of README.md
 * and docs/ must type-check against the built package (`import ... from 'bloom-filter-server'` → dist/index.d.ts,
 * as `npm test` builds first), and the ioredis, library and extension examples must run as
 * written, only with a free port and a temporary dir. (The cluster clients' examples run in
 * test/distributed/cluster-clients.test.ts: test/docs/cluster-examples.test.ts.)
 */
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { allDocBlocks, docBlock } from '../helpers/doc-blocks.js'
import { startServer, testIoThreads, type RunningServer } from '../helpers/start-server.js'
import { runTool } from '../helpers/tools.js'
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.js'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const ENTRY = pathToFileURL(path.join(ROOT, 'dist', 'index.js')).href

const SNIPPETS = {
  ioredis: docBlock('ioredis').body,
  library: docBlock('library').body,
  extension: docBlock('extension').body,
}

/** Every ```ts block of the docs, by file and line. */
const ALL_TS = Object.fromEntries(
  allDocBlocks()
    .filter((block) => block.lang === 'ts' && block.words[0]?.startsWith('from=') !== true)
    .map((block) => [`${block.file.replace(/[^a-z0-9]+/gi, '-')}-${block.line}`, block.body]),
)

/** Type errors of the snippets, compiled as modules beside this test (so 'bloom-filter-server' resolves as for a user). */
function typeErrors(sources: Record<string, string>): string[] {
  const files = new Map(
    Object.entries(sources).map(([name, text]) => [
      path.join(ROOT, 'test', 'docs', `example-${name}.mts`),
      `${text}\nexport {}\n`,
    ]),
  )
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    types: ['node'],
  }
  const host = ts.createCompilerHost(options)
  const { getSourceFile, fileExists, readFile } = host
  host.fileExists = (name) => files.has(name) || fileExists.call(host, name)
  host.readFile = (name) => files.get(name) ?? readFile.call(host, name)
  host.getSourceFile = (name, language, ...rest) => {
    const text = files.get(name)
    return text !== undefined
      ? ts.createSourceFile(name, text, language)
      : getSourceFile.call(host, name, language, ...rest)
  }
  const program = ts.createProgram([...files.keys()], options, host)
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`)
}

/** A snippet as a runnable .mjs: 'bloom-filter-server' is the built entry, the server on a free port in `dir`. */
function runnable(source: string, dir: string, epilogue: string): string {
  let code = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
  }).outputText
  code = code.replace(/from 'bloom-filter-server'/g, `from ${JSON.stringify(ENTRY)}`)
  const config = `config: { ...${JSON.stringify(testIoThreads())}, port: 0, dir: ${JSON.stringify(dir)} }, logSink: () => {}`
  code = code
    .replace("config: { port: 6379, dir: './data' }", config)
    .replace('createServer({ commands:', `createServer({ ${config}, commands:`)
  expect(code).toContain(config)
  return `${code}\n${epilogue}\n`
}

/** Sends one inline command to the snippet's `server` and prints the reply as JSON. */
const ASK = `
const { default: net } = await import('node:net')
async function ask(line) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(server.port, '127.0.0.1', () => socket.write(line + '\\r\\n'))
    let data = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk) => {
      data += chunk
      if (data.endsWith('\\r\\n')) {
        socket.end()
        resolve(data)
      }
    })
    socket.on('error', reject)
  })
}
`

let work: string

beforeAll(() => {
  work = makeTempDir('bfs-readme-')
})

afterAll(() => {
  if (work !== undefined) removeTempDir(work)
})

async function run(name: string, code: string): Promise<string> {
  const file = path.join(work, `${name}.mjs`)
  writeFileSync(file, code)
  const result = await runTool(process.execPath, [file], undefined, 60_000)
  expect(result.stderr).toBe('')
  expect(result.code).toBe(0)
  return result.stdout
}

describe('the Node examples of the docs', () => {
  it('type-check against the built package, every one', () => {
    expect(Object.keys(ALL_TS).length).toBeGreaterThanOrEqual(5)
    expect(typeErrors(ALL_TS)).toEqual([])
  })

  it('the ioredis example runs against a server: BF.MADD answers [1, 1], BF.EXISTS 1', async () => {
    let running: RunningServer | undefined
    try {
      running = await startServer()
      let code = ts.transpileModule(SNIPPETS.ioredis, {
        compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
      }).outputText
      expect(code).toContain('port: 6381')
      const ioredis = pathToFileURL(createRequire(import.meta.url).resolve('ioredis')).href
      code = code
        .replace("from 'ioredis'", `from ${JSON.stringify(ioredis)}`)
        .replace('port: 6381', `port: ${running.port}`)
        .replace('await redis.quit()', 'console.log(JSON.stringify({ fresh, seen }))\nawait redis.quit()')
      const file = path.join(work, 'ioredis.mjs')
      writeFileSync(file, code)
      // The server runs in this process: the example runs as a child (runTool does not block).
      const result = await runTool(process.execPath, [file], undefined, 60_000)
      expect(result.stderr).toBe('')
      expect(JSON.parse(result.stdout)).toEqual({ fresh: [1, 1], seen: 1 })
    } finally {
      await running?.stop()
    }
  })

  it('the library snippet serves its filter, also on a second run over the same data dir', async () => {
    const dir = path.join(work, 'data')
    const epilogue = `${ASK}
console.log(JSON.stringify({ exists: await ask('BF.EXISTS seen https://example.com/'), other: await ask('BF.EXISTS seen https://example.org/') }))
await server.close()`
    const code = runnable(SNIPPETS.library, dir, epilogue)
    // The first run saves 'seen' at close; the second starts from that snapshot.
    for (const round of ['first', 'second']) {
      const out = await run(`library-${round}`, code)
      expect(JSON.parse(out), round).toEqual({ exists: ':1\r\n', other: ':0\r\n' })
    }
  })

  it('the extension snippet adds both commands to the table', async () => {
    const epilogue = `await server.start()
${ASK}
console.log(JSON.stringify({ count: await ask('FILTERS.COUNT'), arity: await ask('BFX.MADDNEW k') }))
await server.close()`
    const out = await run('extension', runnable(SNIPPETS.extension, path.join(work, 'ext'), epilogue))
    expect(JSON.parse(out)).toEqual({
      count: ':0\r\n',
      arity: "-ERR wrong number of arguments for 'bfx.maddnew' command\r\n",
    })
  })
})
