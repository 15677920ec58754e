/**
 * The status page (GET /) and its listing (GET /filters) on a live server with requirepass: the
 * JSON's fields against BF.INFO, its orders, pages and refusals, HTTP Basic auth, a page that names
 * no external URL, and the page as headless Chromium renders it, with a filter near full and a
 * seed-format filter loaded with BF.LOAD and filled past its capacity flagged.
 */
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startServer, type RunningServer } from '../helpers/start-server.js'
import { hasTool, runTool } from '../helpers/tools.js'
import { OriginalFilter } from '../helpers/original-filter.js'
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.js'

const PASSWORD = 'status-pass'
const AUTH = 'Basic ' + Buffer.from(`default:${PASSWORD}`).toString('base64')
const HTML_NAME = `<b>&"x'`
const ROW_FIELDS = [
  'name',
  'type',
  'capacity',
  'items',
  'layers',
  'bytes',
  'fillRatio',
  'estimatedErrorRate',
  'errorRate',
  'ttl',
  'verdict',
  'itemsLeft',
  'scaling',
]

interface Row {
  name: string
  type: string
  capacity: number
  items: number
  layers: number
  bytes: number
  fillRatio: number
  estimatedErrorRate: number
  errorRate: number
  ttl: number
  verdict: string
  itemsLeft: number
  scaling: boolean
}

let running: RunningServer
let redis: Redis
let base: string

/** GET (or `method`) with Basic credentials for default; `authorization` null sends none. */
async function get(
  target: string,
  authorization: string | null = AUTH,
  method = 'GET',
): Promise<{ status: number; body: string; headers: Headers }> {
  const response = await fetch(base + target, { method, headers: authorization === null ? {} : { authorization } })
  return { status: response.status, body: await response.text(), headers: response.headers }
}

async function rows(query = ''): Promise<Row[]> {
  const response = await get(`/filters${query}`)
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
  return JSON.parse(response.body) as Row[]
}

beforeAll(async () => {
  running = await startServer({ 'http-port': -1, requirepass: PASSWORD })
  base = `http://127.0.0.1:${running.server.httpPort}`
  redis = new Redis({ port: running.port, host: '127.0.0.1', password: PASSWORD })
  // ok: a filter that scaled twice; near full: a NONSCALING one at 95 of 100.
  await redis.call('BF.RESERVE', 'grown', '0.01', '100', 'EXPANSION', '2')
  await redis.call('BF.MADD', 'grown', ...Array.from({ length: 500 }, (_, i) => `g${i}`))
  await redis.call('BF.RESERVE', 'near', '0.01', '100', 'NONSCALING')
  await redis.call('BF.MADD', 'near', ...Array.from({ length: 95 }, (_, i) => `n${i}`))
  await redis.call('BF.ADD', HTML_NAME, 'one')
  // over target: the original library never refuses an add, so its file can hold 2.5x its capacity.
  const original = new OriginalFilter(1000, 0.01, 0x5eed)
  for (let i = 0; i < 2500; i++) original.add(Buffer.from(`o${i}`))
  writeFileSync(path.join(running.dir, 'legacy.blf'), original.file())
  expect(await redis.call('BF.LOAD', 'legacy', 'legacy.blf')).toBe('OK')
})

afterAll(async () => {
  redis?.disconnect()
  await running?.stop()
})

describe('GET /filters', () => {
  it('lists every filter with the figures BF.INFO reports, sorted by name', async () => {
    const listed = await rows()
    expect(listed.map((row) => row.name)).toEqual([HTML_NAME, 'grown', 'legacy', 'near'])
    for (const row of listed) {
      expect(Object.keys(row)).toEqual(ROW_FIELDS)
      const info = (await redis.call('BF.INFO', row.name)) as (string | number)[]
      expect([row.capacity, row.bytes, row.layers, row.items]).toEqual([info[1], info[3], info[5], info[7]])
      expect(row.ttl).toBe(-1)
      expect(row.fillRatio).toBeGreaterThan(0)
      expect(row.fillRatio).toBeLessThan(1)
    }
    const byName = new Map(listed.map((row) => [row.name, row]))
    expect(byName.get('grown')).toMatchObject({
      type: 'bloom',
      layers: 3,
      capacity: 700,
      errorRate: 0.01,
      verdict: 'ok',
      itemsLeft: -1,
      scaling: true,
    })
    expect(byName.get('near')).toMatchObject({
      type: 'bloom',
      items: 95,
      capacity: 100,
      errorRate: 0.01,
      verdict: 'near full',
      itemsLeft: 5,
      scaling: false,
    })
    const legacy = byName.get('legacy')!
    expect(legacy).toMatchObject({
      type: 'bloom (seeded)',
      items: 2500,
      capacity: 1000,
      errorRate: 0.01,
      verdict: 'over target',
      itemsLeft: 0,
      scaling: false,
    })
    expect(legacy.estimatedErrorRate).toBeGreaterThan(0.1)
  })

  it('sorts by bytes (largest first) and by estimated rate (worst first), and pages', async () => {
    const bySize = await rows('?sort=bytes')
    const sizes = bySize.map((row) => row.bytes)
    expect(sizes).toEqual([...sizes].sort((a, b) => b - a))
    const byRate = await rows('?sort=estimatedErrorRate')
    expect(byRate[0]!.name).toBe('legacy')
    const rates = byRate.map((row) => row.estimatedErrorRate)
    expect(rates).toEqual([...rates].sort((a, b) => b - a))
    const all = await rows('?sort=estimatedErrorRate&limit=1000')
    const page = await get('/filters?offset=1&limit=2&sort=estimatedErrorRate')
    expect(JSON.parse(page.body)).toEqual(all.slice(1, 3))
    expect(page.headers.get('x-total-count')).toBe('4')
    expect(await rows('?offset=4')).toEqual([])
    expect(await rows('?%73ort=%62ytes')).toEqual(bySize)
  })

  it('answers 400 with the reason for a bad parameter', async () => {
    const cases: [string, string][] = [
      ['limit=0', 'limit must be an integer from 1 to 1000'],
      ['limit=1001', 'limit must be an integer from 1 to 1000'],
      ['limit=ten', 'limit must be an integer from 1 to 1000'],
      ['limit=', 'limit must be an integer from 1 to 1000'],
      ['offset=-1', 'offset must be a non-negative integer'],
      ['offset=1.5', 'offset must be a non-negative integer'],
      ['sort=size', 'sort must be one of name, bytes, estimatedErrorRate'],
      ['page=2', "unknown parameter 'page' (known: limit, offset, sort)"],
      ['limit=1&limit=2', "parameter 'limit' given twice"],
    ]
    for (const [query, reason] of cases) {
      for (const target of [`/filters?${query}`, `/?${query}`]) {
        const response = await get(target)
        expect([target, response.status, response.body]).toEqual([target, 400, `bad request: ${reason}\n`])
      }
    }
  })

  it('asks for the password like the rest of the listener', async () => {
    for (const target of ['/', '/filters', '/?sort=bytes']) {
      const denied = await get(target, null)
      expect([target, denied.status, denied.body]).toEqual([target, 401, 'unauthorized\n'])
      expect(denied.headers.get('www-authenticate')).toBe('Basic realm="bfs", charset="UTF-8"')
      const wrong = await get(target, 'Basic ' + Buffer.from('default:nope').toString('base64'))
      expect(wrong.status).toBe(401)
    }
  })
})

describe('GET /', () => {
  it('is one HTML document that loads nothing from anywhere', async () => {
    const page = await get('/')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(page.headers.get('content-security-policy')).toMatch(/^default-src 'none';/)
    expect(page.body).toMatch(/^<!doctype html>/)
    expect(page.body).not.toMatch(/https?:|\/\/[a-z0-9]|\bsrc=|url\(|@import/i)
    // The name is text, not markup.
    expect(page.body).toContain('data-name="&#60;b&#62;&#38;&#34;x&#39;"')
    expect(page.body).not.toContain(HTML_NAME)
    const head = await get('/', AUTH, 'HEAD')
    expect(head.status).toBe(200)
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(1000)
  })

  it.skipIf(!hasTool('chromium'))(
    'renders in headless Chromium with the filter near full and the one over target flagged',
    async () => {
      const profile = makeTempDir('bfs-chromium-')
      try {
        const url = `http://default:${PASSWORD}@127.0.0.1:${running.server.httpPort}/?sort=estimatedErrorRate`
        const args = [
          '--headless',
          '--disable-gpu',
          '--no-sandbox',
          `--user-data-dir=${profile}`,
          '--virtual-time-budget=5000',
          '--dump-dom',
          url,
        ]
        const result = await runTool('chromium', args)
        const dom = result.stdout
        expect(dom, result.stderr.slice(-2000)).toMatch(/^<!DOCTYPE html>/i)
        // The inline script ran: the attribute exists only in the DOM the browser built.
        expect(dom).toMatch(/<html lang="en" data-rendered-ms="\d+">/)
        const flagged = [
          ...dom.matchAll(/<tr class="filter ([a-z-]+)" data-verdict="([a-z ]+)" data-name="([^"]*)">/g),
        ].map((m) => [m[3], m[1], m[2]])
        expect(flagged).toEqual([
          ['legacy', 'over-target', 'over target'],
          ['near', 'near-full', 'near full'],
          ['grown', 'ok', 'ok'],
          ["&lt;b&gt;&amp;&quot;x'", 'ok', 'ok'],
        ])
        expect(dom).toContain('<span class="verdict over-target">over target</span>')
        expect(dom).toContain('<span class="verdict near-full">near full</span>')
        expect(dom).toMatch(/<span class="rate over">[\d.]+%<\/span> \/ 1\.00%/)
        expect(dom.match(/<svg class="chart/g)).toHaveLength(4)
        expect(dom.match(/<svg class="chart over"/g)).toHaveLength(1)
        for (const label of ['ops/s', 'clients', 'memory', 'last save', 'append log', 'replication'])
          expect(dom).toContain(`<dt>${label}</dt>`)
        expect(dom).toContain('<span id="range">1–4 of 4</span>')
      } finally {
        removeTempDir(profile)
      }
    },
  )
})
