/**
 * Reads src/ as the TypeScript compiler parses it, for the architecture tests: every module's
 * imports (type-only ones, re-exports and dynamic imports included) and every function's extent.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve, dirname, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

/** The src/ folder of this checkout. */
export const SRC_DIR = fileURLToPath(new URL('../../src/', import.meta.url))

/** One import of a module: what it names and where it points inside src/ (undefined: a package or node:). */
export interface ImportEdge {
  readonly specifier: string
  /** The imported file relative to src/, with `/` separators and a .ts ending. */
  readonly target: string | undefined
  readonly line: number
}

/** One function, method, accessor or arrow function and the lines it spans. */
export interface FunctionExtent {
  readonly name: string
  readonly line: number
  readonly lines: number
}

/** Every .ts file below `dir`, relative to src/ with `/` separators. */
export function sourceFiles(dir = SRC_DIR): string[] {
  const found: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) found.push(...sourceFiles(path))
    else if (entry.name.endsWith('.ts')) found.push(relative(SRC_DIR, path).split(sep).join('/'))
  }
  return found.sort()
}

/** Parses one file of src/ (relative path) or any text given as `text`. */
export function parse(file: string, text = readFileSync(join(SRC_DIR, file), 'utf8')): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true)
}

function lineOf(source: ts.SourceFile, position: number): number {
  return source.getLineAndCharacterOfPosition(position).line + 1
}

function edge(source: ts.SourceFile, file: string, specifier: string, at: ts.Node): ImportEdge {
  const line = lineOf(source, at.getStart(source))
  if (!specifier.startsWith('.')) return { specifier, target: undefined, line }
  const absolute = resolve(dirname(join(SRC_DIR, file)), specifier.replace(/\.js$/, '.ts'))
  return { specifier, target: relative(SRC_DIR, absolute).split(sep).join('/'), line }
}

/** Every module specifier `file` names: import (type or not), export ... from, import(), require(). */
export function importsOf(file: string, source = parse(file)): ImportEdge[] {
  const edges: ImportEdge[] = []
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier !== undefined) {
      if (ts.isStringLiteral(node.moduleSpecifier)) edges.push(edge(source, file, node.moduleSpecifier.text, node))
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const expression = node.moduleReference.expression
      if (ts.isStringLiteral(expression)) edges.push(edge(source, file, expression.text, node))
    } else if (ts.isCallExpression(node) && node.arguments.length > 0 && ts.isStringLiteralLike(node.arguments[0]!)) {
      const callee = node.expression
      const dynamic = callee.kind === ts.SyntaxKind.ImportKeyword
      const required = ts.isIdentifier(callee) && callee.text === 'require'
      if (dynamic || required) edges.push(edge(source, file, (node.arguments[0] as ts.StringLiteral).text, node))
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      edges.push(edge(source, file, node.argument.literal.text, node))
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return edges
}

function functionName(node: ts.Node, source: ts.SourceFile): string {
  const named = node as ts.Node & { name?: ts.Node }
  if (named.name !== undefined) return named.name.getText(source)
  if (ts.isConstructorDeclaration(node)) return 'constructor'
  const parent = node.parent
  if (
    parent !== undefined &&
    (ts.isVariableDeclaration(parent) || ts.isPropertyDeclaration(parent) || ts.isPropertyAssignment(parent))
  ) {
    return parent.name.getText(source)
  }
  return `<anonymous at line ${lineOf(source, node.getStart(source))}>`
}

/** Every function-like body in the file with the number of lines it spans, nested ones included. */
export function functionsOf(file: string, source = parse(file)): FunctionExtent[] {
  const found: FunctionExtent[] = []
  const visit = (node: ts.Node): void => {
    const isFunction =
      ts.isFunctionDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isConstructorDeclaration(node) ||
      ts.isGetAccessorDeclaration(node) ||
      ts.isSetAccessorDeclaration(node) ||
      ts.isArrowFunction(node) ||
      ts.isFunctionExpression(node)
    if (isFunction && (node as ts.FunctionLikeDeclaration).body !== undefined) {
      const first = lineOf(source, node.getStart(source))
      const last = lineOf(source, node.getEnd())
      found.push({ name: functionName(node, source), line: first, lines: last - first + 1 })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}
