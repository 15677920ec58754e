import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { parse, sourceFiles } from '../helpers/source-tree.js'
import { ERR } from '../../src/protocol/error-texts.js'
import { MAX_KEY_BYTES } from '../../src/store/registry.js'

/**
 * Every error reply's text is in the error catalogue, src/protocol/error-texts.ts (docs/LAYOUT.md):
 * no string or template literal elsewhere in src/ begins with an error code word and a space.
 * Comments may quote a text; code may not build one. RedisBloom's texts without a code word
 * ("Bad capacity") cannot be told from other strings by their shape: the catalogue's own rule
 * (fixed texts in `ERR`, builders below it) keeps them there.
 */
const CATALOGUE = ['protocol/error-texts.ts']

/** The code words of redis 7.0's and bfs's error replies. */
const CODE_WORDS = [
  'ERR',
  'WRONGTYPE',
  'NOPERM',
  'NOAUTH',
  'WRONGPASS',
  'MOVED',
  'ASK',
  'CROSSSLOT',
  'TRYAGAIN',
  'CLUSTERDOWN',
  'READONLY',
  'NOREPLICAS',
  'MISCONF',
  'OOM',
  'EXECABORT',
  'LOADING',
  'BUSY',
  'BUSYKEY',
  'NOPROTO',
  'NOSCRIPT',
  'UNBLOCKED',
  'MASTERDOWN',
  'NOTBUSY',
  'IOERR',
  'DENIED',
]
const ERROR_TEXT = new RegExp(`^(${CODE_WORDS.join('|')}) `)

/** Literals that look like error texts and are not replies bfs builds, each with why. */
const ALLOWED: readonly { file: string; text: string; why: string }[] = [
  {
    file: 'tools/bfs-copy.ts',
    text: 'ERR not found',
    why: "a client comparing the source server's reply, not a reply bfs sends",
  },
]

/** `file:line text` for each literal in `file` (text given for the self-check) that begins like an error reply. */
function errorLiterals(file: string, text?: string): string[] {
  const source = parse(file, text)
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    const literal =
      ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)
        ? node.text
        : ts.isTemplateExpression(node)
          ? node.head.text
          : undefined
    if (
      literal !== undefined &&
      ERROR_TEXT.test(literal) &&
      !ALLOWED.some((allowed) => allowed.file === file && allowed.text === literal)
    ) {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1
      found.push(`${file}:${line} ${literal}`)
    }
    // An import's path is no text.
    if (!ts.isImportDeclaration(node) && !ts.isExportDeclaration(node)) ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

describe('the error catalogue', () => {
  it('holds every error text: no literal in src/ outside it begins with an error code word', () => {
    const files = sourceFiles().filter((file) => !CATALOGUE.includes(file))
    expect(files.flatMap((file) => errorLiterals(file))).toEqual([])
  })

  it('each allowance still names a literal that is there', () => {
    for (const allowed of ALLOWED) {
      const source = parse(allowed.file)
      const texts: string[] = []
      const visit = (node: ts.Node): void => {
        if (ts.isStringLiteral(node)) texts.push(node.text)
        ts.forEachChild(node, visit)
      }
      visit(source)
      expect(texts, `${allowed.file}: ${allowed.why}`).toContain(allowed.text)
    }
  })

  it('finds strings and templates that build an error text, and leaves comments and other words alone', () => {
    const text = [
      "const a = 'ERR bad thing'",
      'const b = `MOVED ${slot} ${address}`',
      'const c = "WRONGTYPE Operation"',
      'const d = `NOPERM this user`',
      '// ERR only a comment',
      "const e = 'ERRORS are fine'",
      "const f = 'ERR'",
      "const g = 'Bad capacity'",
      'log(`ASKING ${x}`)',
    ].join('\n')
    expect(errorLiterals('self-check.ts', text)).toEqual([
      'self-check.ts:1 ERR bad thing',
      'self-check.ts:2 MOVED ',
      'self-check.ts:3 WRONGTYPE Operation',
      'self-check.ts:4 NOPERM this user',
    ])
  })

  it('groups its fixed texts under a comment naming their source', () => {
    const file = CATALOGUE[0]!
    const source = parse(file)
    const text = source.getFullText()
    const unsourced: string[] = []
    const visit = (node: ts.Node): void => {
      if (ts.isVariableDeclaration(node) && node.name.getText(source) === 'ERR') {
        const object = (node.initializer as ts.AsExpression).expression as ts.ObjectLiteralExpression
        for (const property of object.properties) {
          const trivia = text.slice(property.pos, property.getStart(source))
          const comment = trivia.includes('//') || trivia.includes('/*')
          // A new group (the first entry, or one after a blank line) opens with a comment that names its source.
          const opensGroup = property === object.properties[0] || /\n[ \t]*\n/.test(trivia)
          if (opensGroup && !(comment && /redis|RedisBloom|bfs/.test(trivia)))
            unsourced.push(property.name!.getText(source))
        }
      }
      ts.forEachChild(node, visit)
    }
    visit(source)
    expect(unsourced).toEqual([])
  })

  it("names every builder's source", () => {
    const file = CATALOGUE[0]!
    const source = parse(file)
    const unsourced = source.statements
      .filter((statement): statement is ts.FunctionDeclaration => ts.isFunctionDeclaration(statement))
      .filter((fn) => fn.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) === true)
      .filter((fn) => !/redis|RedisBloom|bfs/.test(source.getFullText().slice(fn.pos, fn.getStart(source))))
      .map((fn) => fn.name!.text)
    expect(unsourced).toEqual([])
  })

  it('quotes the key length the registry holds', () => {
    expect(ERR.KEY_TOO_LONG).toBe(`ERR key or name longer than ${MAX_KEY_BYTES} bytes`)
  })
})
