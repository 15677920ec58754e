import { readFileSync, readdirSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

/**
 * How bfs is started: `npm start` and the `bfs` binary (src/main.ts's shebang) run node with the
 * same glibc tunables and flags, and those fix malloc's mmap threshold at 16 KiB. Without it glibc
 * raises the threshold as large blocks are freed and carves later ones (reply, log and stream
 * Buffers) from its main heap, which it cannot shrink while a reservation made at start sits right
 * after the brk area: after a day's kind of use an idle server kept 20-35 MB of freed blocks resident
 * (bench/memory.sh, its last phase). The bench scripts run bfs as npm start does.
 */
const ROOT = new URL('../../', import.meta.url)
const read = (path: string): string => readFileSync(new URL(path, ROOT), 'utf8')
const packageJson = JSON.parse(read('package.json')) as { scripts: Record<string, string> }
const startScript = packageJson.scripts['start']!

/** `GLIBC_TUNABLES=... node <flags>` of a command line, or undefined when it has none. */
function nodeLaunch(line: string): { tunables: string; flags: string } | undefined {
  const match = /GLIBC_TUNABLES=(\S+) node ((?:--\S+ )*)/.exec(line)
  return match === null ? undefined : { tunables: match[1]!, flags: match[2]!.trim() }
}

/** glibc reads `name=value` pairs separated by colons. */
function tunable(tunables: string, name: string): string | undefined {
  return tunables
    .split(':')
    .find((pair) => pair.startsWith(`${name}=`))
    ?.slice(name.length + 1)
}

describe('how bfs is started', () => {
  it("npm start fixes malloc's mmap threshold at 16 KiB at most", () => {
    const launch = nodeLaunch(startScript)
    expect(launch, startScript).toBeDefined()
    const threshold = tunable(launch!.tunables, 'glibc.malloc.mmap_threshold')
    expect(threshold, launch!.tunables).toBeDefined()
    expect(Number(threshold)).toBeGreaterThan(0)
    expect(Number(threshold)).toBeLessThanOrEqual(16384)
  })

  it("the bfs binary's shebang runs node as npm start does", () => {
    const shebang = read('src/main.ts').split('\n')[0]!
    expect(shebang.startsWith('#!/usr/bin/env -S ')).toBe(true)
    expect(nodeLaunch(`${shebang.slice('#!/usr/bin/env -S '.length)} `)).toEqual(nodeLaunch(startScript))
  })

  it("the bench scripts that start bfs themselves use npm start's tunables", () => {
    const expected = nodeLaunch(startScript)!.tunables
    const scripts = readdirSync(new URL('bench/', ROOT)).filter((name) => /\.(sh|mjs)$/.test(name))
    let checked = 0
    for (const name of scripts) {
      const text = read(`bench/${name}`)
      for (const match of text.matchAll(/(?<![A-Z_])GLIBC_TUNABLES(?:=|: ')([a-z0-9_.=:]+)/g)) {
        checked++
        expect(match[1], `bench/${name}`).toBe(expected)
      }
    }
    expect(checked).toBeGreaterThan(5)
  })
})
