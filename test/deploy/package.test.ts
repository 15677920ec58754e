/**
 * The package as a user installs it: `npm pack`, then `npm install -g` of the tarball under a
 * temporary prefix, which must give working `bfs`, `bfs-copy` and `bfs-import` binaries and the
 * library (imported by its package name from a project that installed the tarball); and the
 * systemd unit of deploy/systemd, verified by `systemd-analyze verify` against that installed
 * binary (skips only when systemd-analyze is absent; .ci/run installs it). The tarball is packed
 * from the build `npm test` makes first (pretest), without running `prepare` again.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { freePort, hasTool, InteractiveTool, runTool, type ToolResult } from '../helpers/tools.js'
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.js'
import { testIoThreadsArgs } from '../helpers/child-server.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  name: string
  version: string
  bin: Record<string, string>
}
let work: string
let prefix: string
let tarball: string

function ok(result: ToolResult, what: string): ToolResult {
  expect(result.code, `${what}:\n${result.stdout}\n${result.stderr}`).toBe(0)
  return result
}

beforeAll(async () => {
  work = makeTempDir('bfs-package-')
  prefix = path.join(work, 'prefix')
  const npm = (args: string[]): Promise<ToolResult> =>
    runTool('npm', ['--prefix', root, '--no-audit', '--no-fund', '--loglevel=error', ...args], undefined, 300_000)
  ok(await npm(['pack', '--ignore-scripts', '--silent', '--pack-destination', work]), 'npm pack')
  tarball = path.join(
    work,
    readdirSync(work).find((name) => name.endsWith('.tgz'))!,
  )
  ok(
    await runTool(
      'npm',
      ['install', '--global', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=error', tarball],
      undefined,
      300_000,
    ),
    'npm install -g',
  )
}, 600_000)

afterAll(() => {
  if (work !== undefined) removeTempDir(work)
})

describe('the package', () => {
  it('has a name of its own, and the bfs, bfs-copy and bfs-import binaries', () => {
    expect(pkg.name).toBe('bloom-filter-server')
    expect(Object.keys(pkg.bin).sort()).toEqual(['bfs', 'bfs-copy', 'bfs-import'])
    expect(path.basename(tarball)).toBe(`${pkg.name}-${pkg.version}.tgz`)
    // The README's install steps name this tarball.
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8')
    expect(readme).toContain(`npm install -g ./${pkg.name}-${pkg.version}.tgz`)
  })

  it('installs globally from the tarball: bfs --version answers, the tools print their help, bfs serves', async () => {
    const bin = (name: string): string => path.join(prefix, 'bin', name)
    expect(ok(await runTool(bin('bfs'), ['--version']), 'bfs --version').stdout).toBe(`bfs v${pkg.version}\n`)
    expect(ok(await runTool(bin('bfs-copy'), ['--help']), 'bfs-copy --help').stdout).toContain('usage: bfs-copy')
    expect(ok(await runTool(bin('bfs-import'), ['--help']), 'bfs-import --help').stdout).toContain('usage: bfs-import')
    const port = await freePort()
    const dir = path.join(work, 'data')
    const server = InteractiveTool.start(bin('bfs'), [...testIoThreadsArgs(), '--port', String(port), '--dir', dir])
    try {
      await server.waitFor((output) => output.includes('Ready to accept connections'))
      const client = new Redis({ port, host: '127.0.0.1' })
      try {
        expect(await client.call('BF.ADD', 'f', 'x')).toBe(1)
      } finally {
        client.disconnect()
      }
    } finally {
      server.kill()
      await server.waitExit()
    }
  })

  it('is importable as a library by its name from a project that installed the tarball', async () => {
    const project = path.join(work, 'project')
    mkdirSync(project)
    writeFileSync(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'consumer', version: '1.0.0', type: 'module', private: true }),
    )
    ok(
      await runTool(
        'npm',
        ['install', '--prefix', project, '--no-audit', '--no-fund', '--loglevel=error', '--prefer-offline', tarball],
        undefined,
        300_000,
      ),
      'npm install',
    )
    const script = path.join(project, 'check.mjs')
    writeFileSync(
      script,
      [
        `import { BloomFilter, createServer } from '${pkg.name}'`,
        `const filter = new BloomFilter({ capacity: 1000, errorRate: 0.01 })`,
        `filter.add('a')`,
        `console.log(filter.has('a'), filter.has('b'), typeof createServer)`,
      ].join('\n'),
    )
    expect(ok(await runTool(process.execPath, [script]), 'the library').stdout).toBe('true false function\n')
  })
})

describe.skipIf(!hasTool('systemd-analyze'))('the systemd unit', () => {
  it('passes systemd-analyze verify with ExecStart at the installed bfs', async () => {
    const unit = readFileSync(path.join(root, 'deploy', 'systemd', 'bfs.service'), 'utf8')
    expect(unit).toMatch(/^Type=notify$/m)
    expect(unit).toMatch(/^LimitNOFILE=\d+$/m)
    expect(unit).toMatch(/^ExecStart=\/usr\/local\/bin\/bfs .*--supervised systemd/m)
    const dir = path.join(work, 'unit')
    mkdirSync(dir)
    const copy = path.join(dir, 'bfs.service')
    writeFileSync(
      copy,
      unit.replace(/^ExecStart=\/usr\/local\/bin\/bfs /m, `ExecStart=${path.join(prefix, 'bin', 'bfs')} `),
    )
    const result = await runTool('systemd-analyze', ['verify', copy])
    expect(result.code, result.stderr).toBe(0)
    // Unknown keys and bad values are only warnings: none may name the unit.
    expect(result.stderr.split('\n').filter((line) => line.includes('bfs.service'))).toEqual([])
  })
})
