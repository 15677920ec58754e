/**
 * Runs a `benchmark` suite and prints one line per case: ops/s, ± relative margin, samples.
 * Shared by the *.bench.ts files; each case's `fn` does one operation.
 */
import Benchmark from 'benchmark'

/** One measured operation; `items` scales ops/s to items/s when an op handles several items. */
export interface BenchCase {
  name: string
  fn: () => void
  items?: number
}

/** Runs the cases in order (synchronously) and prints a markdown table. */
export function runSuite(title: string, cases: readonly BenchCase[]): void {
  const suite = new Benchmark.Suite(title)
  for (const c of cases) suite.add(c.name, c.fn, { minSamples: 20, maxTime: Number(process.env.BENCH_SECONDS ?? 1) })
  console.log(`\n### ${title}\n`)
  console.log('| case | ops/s | items/s | ± | samples |')
  console.log('|---|---:|---:|---:|---:|')
  suite.on('cycle', (event: Benchmark.Event) => {
    const bench = event.target as unknown as Benchmark & { name: string }
    const items = cases.find((c) => c.name === bench.name)?.items ?? 1
    const hz = bench.hz
    console.log(
      `| ${bench.name} | ${format(hz)} | ${format(hz * items)} | ${bench.stats.rme.toFixed(1)}% | ${bench.stats.sample.length} |`,
    )
  })
  suite.run({ async: false })
}

function format(n: number): string {
  return Math.round(n).toLocaleString('en-US')
}
