/**
 * The MANIFEST codec (src/format/manifest.ts): the exact text of a MANIFEST, pinned, and every way
 * the parser refuses text. The checksums here are computed with Node's zlib, not the codec's own
 * CRC-32, so the two are checked against each other.
 */
import { crc32 as zlibCrc32 } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { DecodeError } from '../../src/format/decode-error.js'
import {
  filterFileName,
  formatManifest,
  isFilterFileName,
  parseManifest,
  parseManifestText,
} from '../../src/format/manifest.js'

const FILES = [
  { file: '000000000003.bf', bytes: 4242 },
  { file: '000000000012.bf', bytes: 102 },
]

/** The MANIFEST of FILES with log-from 7 and log-open, byte for byte. */
const GOLDEN =
  'bfs-manifest 1\n' +
  'log-from 7\n' +
  'log-open\n' +
  'file 000000000003.bf 4242\n' +
  'file 000000000012.bf 102\n' +
  'end 2 ce34dffc\n'

/** GOLDEN with the replication position a SAVE records (repl-id, repl-offset), byte for byte. */
const REPL = { replid: '8f3ca4d1b2c3d4e5f60718293a4b5c6d7e8f9012', offset: 15290 }
const GOLDEN_REPL =
  'bfs-manifest 1\n' +
  'log-from 7\n' +
  'log-open\n' +
  'repl-id 8f3ca4d1b2c3d4e5f60718293a4b5c6d7e8f9012\n' +
  'repl-offset 15290\n' +
  'file 000000000003.bf 4242\n' +
  'file 000000000012.bf 102\n' +
  'end 2 d417b690\n'

/** `body` closed with an `end` line of `count` and the body's right checksum. */
function sealed(body: string, count: number): string {
  const crc = zlibCrc32(Buffer.from(body, 'latin1'), 0)
  return `${body}end ${count} ${crc.toString(16).padStart(8, '0')}\n`
}

function refusal(text: string): DecodeError {
  try {
    parseManifestText(text)
  } catch (error) {
    expect(error).toBeInstanceOf(DecodeError)
    return error as DecodeError
  }
  throw new Error(`accepted ${JSON.stringify(text)}`)
}

describe('formatManifest', () => {
  it('writes the golden text: magic, log-from, log-open, one line per file, end with count and CRC-32', () => {
    expect(formatManifest(FILES, 7, true)).toBe(GOLDEN)
    expect(sealed(GOLDEN.slice(0, GOLDEN.indexOf('end ')), 2)).toBe(GOLDEN)
  })

  it('writes log-open only with log-from, and neither without a log', () => {
    expect(formatManifest(FILES, 7, false)).toBe(
      sealed('bfs-manifest 1\nlog-from 7\nfile 000000000003.bf 4242\nfile 000000000012.bf 102\n', 2),
    )
    expect(formatManifest([])).toBe('bfs-manifest 1\nend 0 c2014e2f\n')
    expect(formatManifest([], 7)).toBe('bfs-manifest 1\nlog-from 7\nend 0 c5067c92\n')
  })

  it("writes a key's expiry after its file, and only for a key that has one (older MANIFESTs are unchanged)", () => {
    const files = [
      { file: '000000000003.bf', bytes: 4242, expiresAt: 1795000000000 },
      { file: '000000000012.bf', bytes: 102 },
      { file: '000000000013.bf', bytes: 9, expiresAt: -5 },
    ]
    const text = sealed(
      'bfs-manifest 1\nfile 000000000003.bf 4242 expire-at 1795000000000\nfile 000000000012.bf 102\nfile 000000000013.bf 9 expire-at -5\n',
      3,
    )
    expect(formatManifest(files)).toBe(text)
    expect(parseManifestText(text)).toEqual({ files })
    expect(() => parseManifestText(sealed('bfs-manifest 1\nfile 000000000003.bf 4242 expire-at\n', 1))).toThrow(
      DecodeError,
    )
    expect(() => parseManifestText(sealed('bfs-manifest 1\nfile 000000000003.bf 4242 expire-at 1.5\n', 1))).toThrow(
      DecodeError,
    )
  })

  it("writes the stream's database after the replication position when it is not 0 (repl-db)", () => {
    const text = formatManifest(FILES, 7, true, { ...REPL, db: 3 })
    expect(text).toContain(`repl-offset ${REPL.offset}\nrepl-db 3\nfile `)
    expect(parseManifestText(text).repl).toEqual({ ...REPL, db: 3 })
    expect(formatManifest(FILES, 7, true, { ...REPL, db: 0 })).toBe(GOLDEN_REPL)
    expect(parseManifestText(GOLDEN_REPL).repl).toEqual(REPL)
  })

  it("writes a key's database before its expiry, only when it is not 0 (a MANIFEST of database 0 is as before)", () => {
    const files = [
      { file: '000000000003.bf', bytes: 4242, db: 3, expiresAt: 1795000000000 },
      { file: '000000000012.bf', bytes: 102, db: 15 },
      { file: '000000000013.bf', bytes: 9 },
    ]
    const text = sealed(
      'bfs-manifest 1\nfile 000000000003.bf 4242 db 3 expire-at 1795000000000\nfile 000000000012.bf 102 db 15\nfile 000000000013.bf 9\n',
      3,
    )
    expect(formatManifest(files)).toBe(text)
    expect(parseManifestText(text)).toEqual({ files })
    expect(formatManifest([{ file: '000000000013.bf', bytes: 9, db: 0 }])).toBe(
      formatManifest([{ file: '000000000013.bf', bytes: 9 }]),
    )
    for (const line of ['db 0', 'db -1', 'db 01', 'db', 'db x', 'expire-at 5 db 3']) {
      expect(() => parseManifestText(sealed(`bfs-manifest 1\nfile 000000000003.bf 4242 ${line}\n`, 1))).toThrow(
        DecodeError,
      )
    }
  })

  it('writes the replication position after the log lines (golden), and reads it back; old MANIFESTs have none', () => {
    expect(formatManifest(FILES, 7, true, REPL)).toBe(GOLDEN_REPL)
    expect(sealed(GOLDEN_REPL.slice(0, GOLDEN_REPL.indexOf('end ')), 2)).toBe(GOLDEN_REPL)
    expect(parseManifestText(GOLDEN_REPL)).toEqual({ files: FILES, logFrom: 7, logOpen: true, repl: REPL })
    expect(parseManifestText(formatManifest([], undefined, false, { replid: REPL.replid, offset: 0 }))).toEqual({
      files: [],
      repl: { replid: REPL.replid, offset: 0 },
    })
    expect(parseManifestText(GOLDEN).repl).toBeUndefined()
    // A repl-id without its offset is no MANIFEST line.
    expect(refusal(sealed(`bfs-manifest 1\nrepl-id ${REPL.replid}\n`, 0)).code).toBe('corrupt')
  })

  it('names filter files with 12 digits', () => {
    expect(filterFileName(7)).toBe('000000000007.bf')
    expect(isFilterFileName('000000000007.bf')).toBe(true)
    expect(isFilterFileName('7.bf')).toBe(false)
    expect(isFilterFileName('000000000007.bf.123-1.tmp')).toBe(false)
  })
})

describe('parseManifestText', () => {
  it('reads the golden text back', () => {
    expect(parseManifestText(GOLDEN)).toEqual({ files: FILES, logFrom: 7, logOpen: true })
    expect(parseManifest(GOLDEN)).toEqual(FILES)
    expect(parseManifestText(formatManifest(FILES, 7))).toEqual({ files: FILES, logFrom: 7 })
    expect(parseManifestText(formatManifest([]))).toEqual({ files: [] })
  })

  it('refuses a bad magic', () => {
    expect(refusal(GOLDEN.replace('bfs-manifest 1', 'bfs-manifest 2'))).toMatchObject({
      code: 'bad-magic',
      message: 'bad manifest magic',
    })
    expect(refusal('')).toMatchObject({ code: 'bad-magic' })
  })

  it('refuses every prefix of the golden text as truncated', () => {
    for (let cut = 'bfs-manifest 1\n'.length; cut < GOLDEN.length; cut++) {
      expect(refusal(GOLDEN.slice(0, cut)), `cut at ${cut}`).toMatchObject({
        code: 'truncated',
        message: 'truncated manifest',
      })
    }
  })

  it('refuses a changed byte as a checksum mismatch', () => {
    expect(refusal(GOLDEN.replace('4242', '4243'))).toMatchObject({
      code: 'checksum',
      message: 'manifest checksum mismatch',
    })
    expect(refusal(GOLDEN.replace('log-from 7', 'log-from 8'))).toMatchObject({ code: 'checksum' })
    expect(refusal(GOLDEN.replace('log-open\n', ''))).toMatchObject({ code: 'checksum' })
  })

  it('refuses a count that is not the number of file lines', () => {
    expect(refusal(sealed('bfs-manifest 1\nfile 000000000003.bf 4242\n', 2))).toMatchObject({
      code: 'corrupt',
      message: 'manifest count mismatch',
    })
  })

  it.each([
    ['a file name that is not 12 digits', 'file 3.bf 4242', 'file 3.bf 4242'],
    ['a size that is not a number', 'file 000000000003.bf -1', 'file 000000000003.bf -1'],
    ['log-open without log-from', 'log-open', 'log-open'],
    ['log-from 0', 'log-from 0', 'log-from 0'],
    ['log-from with a leading zero', 'log-from 07', 'log-from 07'],
    ['log-from of 17 digits', 'log-from 12345678901234567', 'log-from 12345678901234567'],
    ['an empty line', '', ''],
  ])('refuses %s', (_what, line, shown) => {
    const text = sealed(`bfs-manifest 1\n${line}\n`, 0)
    expect(refusal(text)).toMatchObject({ code: 'corrupt', message: `bad manifest line ${JSON.stringify(shown)}` })
  })

  it('refuses log-from after a file line, log-open twice, and a file listed twice', () => {
    const file = 'file 000000000003.bf 4242\n'
    expect(refusal(sealed(`bfs-manifest 1\n${file}log-from 7\n`, 1)).message).toBe('bad manifest line "log-from 7"')
    expect(refusal(sealed('bfs-manifest 1\nlog-from 7\nlog-open\nlog-open\n', 0)).message).toBe(
      'bad manifest line "log-open"',
    )
    expect(refusal(sealed(`bfs-manifest 1\n${file}${file}`, 2)).message).toBe(
      `bad manifest line ${JSON.stringify(file.trim())}`,
    )
  })
})
