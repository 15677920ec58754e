// `npm start`: builds (npm run build) only when dist/main.js is missing or a source (src/**,
// tsconfig*.json) changed after it was built, then runs dist/main.js in this same process (its
// arguments are this script's, and npm start's node flags apply to it). A start with a current
// build takes no compiler time (a build takes 10-50 s on a loaded 2-core machine) and no second
// Node start-up.
import { execFileSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/** The newest modification time (ms) of the files under `dir`, 0 for none. */
function newestUnder(dir) {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(full) : statSync(full).mtimeMs)
  }
  return newest
}

/** @returns why the project at `root` needs a build, or undefined when dist is current */
export function staleReason(root) {
  let built
  try {
    built = statSync(path.join(root, 'dist', 'main.js')).mtimeMs
  } catch {
    return 'no build yet'
  }
  const inputs = [newestUnder(path.join(root, 'src'))]
  for (const name of readdirSync(root))
    if (/^tsconfig.*\.json$/.test(name)) inputs.push(statSync(path.join(root, name)).mtimeMs)
  return Math.max(...inputs) > built ? 'sources changed since the last build' : undefined
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
  const reason = staleReason(root)
  if (reason !== undefined) {
    process.stderr.write(`bfs: building (${reason})\n`)
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' })
  }
  await import(pathToFileURL(path.join(root, 'dist', 'main.js')).href)
}
