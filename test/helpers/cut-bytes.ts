/** The chunks `bytes` makes when cut at each of `cuts` (ascending offsets; a repeated cut gives an empty chunk). */
export function cutAt(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const chunks: Buffer[] = []
  let start = 0
  for (const cut of cuts) {
    chunks.push(bytes.subarray(start, cut))
    start = cut
  }
  chunks.push(bytes.subarray(start))
  return chunks
}
