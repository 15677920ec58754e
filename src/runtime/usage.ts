/**
 * `bfs --help`: how to start bfs, every flag (each config key is one) with its default and its
 * doc line from the config table, and where the full reference is (the README and
 * bfs.conf.example beside the installed package, named by their paths when they are there).
 */
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { CONFIG_ROWS, DEFAULT_CONFIG, formatConfigValue } from './config.js'

/** A file of the package (the folder above dist/ or src/), by its path when it exists. */
function packageFile(name: string): string {
  const path = fileURLToPath(new URL(`../../${name}`, import.meta.url))
  return existsSync(path) ? path : name
}

/** The text `bfs --help` prints. */
export function usageText(): string {
  const rows = CONFIG_ROWS.map((row) => {
    // user and rename-command are rules, repeatable, with no default: their doc line shows the form.
    const value =
      row.name === 'rename-command' || row.name === 'user' ? '...' : formatConfigValue(DEFAULT_CONFIG, row.name)
    const flag = `--${row.name} ${value === '' ? '""' : /\s/.test(value) ? JSON.stringify(value) : value}`
    return `  ${flag.padEnd(40)} ${row.description}`
  })
  return [
    'Usage: bfs [/path/to/bfs.conf] [--key value ...]',
    '       bfs --version | --help',
    '',
    'Starts the bfs server (Redis protocol, RedisBloom 2.4 commands). The config file, if given,',
    'comes first: redis.conf style, one `key value` per line, # comments, "quoted" values. Then',
    'the flags: every config key is a flag, and a flag wins over the file (bfs bfs.conf --port 7000).',
    'With neither, bfs listens on 127.0.0.1:6381 with its data in ./data.',
    '',
    'Flags (config keys) with their defaults:',
    ...rows,
    '',
    `Every key documented, with an example config: ${packageFile('bfs.conf.example')}`,
    `Full reference (commands, configuration, persistence, replication): ${packageFile('README.md')}`,
    '',
  ].join('\n')
}
