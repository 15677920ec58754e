// The npm `bloomfilter` package (Jason Davies; FNV-1a, strings) ships no types; bench/ only.
declare module 'bloomfilter' {
  export class BloomFilter {
    constructor(bits: number, hashCount: number)
    add(item: string): void
    test(item: string): boolean
  }
}
