;; MurmurHash64A (RedisBloom 2.4 deps/murmur2/MurmurHash2.c, MurmurHash64A_Bloom) with native 64-bit
;; multiplies, for murmur-hash.ts. `npm run build:wasm` turns this file into murmur-wasm-module.ts.
;;
;; Memory, one 64 KiB page:
;;   [0, 16)   the result: h1 then h2, each as (high u32, low u32), little-endian
;;   [16, ...) the item, written by the caller, followed by 8 zero bytes
(module
  (memory (export "memory") 1)

  ;; MurmurHash64A of memory[16, 16 + len) with a 64-bit seed.
  (func $murmur64a (param $len i32) (param $seed i64) (result i64)
    (local $h i64) (local $k i64) (local $p i32) (local $blocksEnd i32)
    ;; h = seed ^ (len * m)
    (local.set $h (i64.xor (local.get $seed)
      (i64.mul (i64.extend_i32_u (local.get $len)) (i64.const 0xc6a4a7935bd1e995))))
    (local.set $p (i32.const 16))
    (local.set $blocksEnd (i32.add (i32.const 16) (i32.and (local.get $len) (i32.const -8))))
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $p) (local.get $blocksEnd)))
        ;; k = block * m; k ^= k >> r; k *= m; h ^= k; h *= m
        (local.set $k (i64.mul (i64.load (local.get $p)) (i64.const 0xc6a4a7935bd1e995)))
        (local.set $k (i64.mul (i64.xor (local.get $k) (i64.shr_u (local.get $k) (i64.const 47)))
          (i64.const 0xc6a4a7935bd1e995)))
        (local.set $h (i64.mul (i64.xor (local.get $h) (local.get $k)) (i64.const 0xc6a4a7935bd1e995)))
        (local.set $p (i32.add (local.get $p) (i32.const 8)))
        (br $blocks)))
    ;; The 1..7 tail bytes: the C switch xors each into h; the zeros after the item make one
    ;; little-endian load do the same.
    (if (i32.and (local.get $len) (i32.const 7))
      (then
        (local.set $h (i64.mul (i64.xor (local.get $h) (i64.load (local.get $p)))
          (i64.const 0xc6a4a7935bd1e995)))))
    ;; h ^= h >> r; h *= m; h ^= h >> r
    (local.set $h (i64.mul (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 47)))
      (i64.const 0xc6a4a7935bd1e995)))
    (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 47))))

  ;; MurmurHash64A(item, seed) alone (a Cuckoo filter's one hash), stored as hashPair stores h1.
  (func (export "hashOne") (param $len i32) (param $seedHi i32) (param $seedLo i32)
    (i64.store (i32.const 0) (i64.rotl (call $murmur64a (local.get $len)
      (i64.or (i64.shl (i64.extend_i32_u (local.get $seedHi)) (i64.const 32))
        (i64.extend_i32_u (local.get $seedLo)))) (i64.const 32))))

  ;; h1 = MurmurHash64A(item, seed); h2 = MurmurHash64A(item, fold ? (u32)((h1 >> 32) ^ h1) : h1).
  ;; The seed comes as two u32 halves (an i64 parameter would be a BigInt in JavaScript).
  (func (export "hashPair") (param $len i32) (param $seedHi i32) (param $seedLo i32) (param $fold i32)
    (local $h1 i64) (local $seed2 i64)
    (local.set $h1 (call $murmur64a (local.get $len)
      (i64.or (i64.shl (i64.extend_i32_u (local.get $seedHi)) (i64.const 32))
        (i64.extend_i32_u (local.get $seedLo)))))
    (i64.store (i32.const 0) (i64.rotl (local.get $h1) (i64.const 32)))
    (local.set $seed2 (local.get $h1))
    (if (local.get $fold)
      (then
        (local.set $seed2 (i64.and (i64.xor (local.get $h1) (i64.shr_u (local.get $h1) (i64.const 32)))
          (i64.const 0xffffffff)))))
    (i64.store (i32.const 8) (i64.rotl (call $murmur64a (local.get $len) (local.get $seed2)) (i64.const 32))))
)
