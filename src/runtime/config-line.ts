/** What a backslash escape inside "double quotes" stands for; any other character stands for itself. */
const ESCAPES: Readonly<Record<string, string>> = { n: '\n', r: '\r', t: '\t', b: '\b', a: '\x07' }

/**
 * redis sds.c sdssplitargs for one bfs.conf line: words separated by spaces, "double quoted"
 * with \n \r \t \b \a \\ \" \xHH escapes, or 'single quoted'. Returns undefined on unbalanced quotes.
 */
export function splitConfigLine(line: string): string[] | undefined {
  const words: string[] = []
  let i = 0
  while (i < line.length) {
    while (i < line.length && /\s/.test(line[i]!)) i++
    if (i >= line.length) break
    let word = ''
    const quote = line[i] === '"' || line[i] === "'" ? line[i] : undefined
    if (quote) {
      i++
      let closed = false
      while (i < line.length) {
        const c = line[i]!
        if (quote === '"' && c === '\\' && i + 1 < line.length) {
          const next = line[i + 1]!
          const hex = /^x[0-9a-fA-F]{2}$/.test(line.slice(i + 1, i + 4))
          if (hex) {
            word += String.fromCharCode(parseInt(line.slice(i + 2, i + 4), 16))
            i += 4
            continue
          }
          word += ESCAPES[next] ?? next
          i += 2
          continue
        }
        if (quote === "'" && c === '\\' && line[i + 1] === "'") {
          word += "'"
          i += 2
          continue
        }
        if (c === quote) {
          closed = true
          i++
          break
        }
        word += c
        i++
      }
      // A closing quote must be followed by a space or the end of the line.
      if (!closed || (i < line.length && !/\s/.test(line[i]!))) return undefined
    } else {
      while (i < line.length && !/\s/.test(line[i]!)) word += line[i++]
    }
    words.push(word)
  }
  return words
}
