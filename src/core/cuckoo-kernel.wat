;; The Cuckoo data plane of one arena (arena.ts): RedisBloom 2.4's src/cuckoo.c over the buckets of
;; a filter whose sub-filters all lie in this memory (cuckoo-filter.ts, cuckoo-batch.ts). Each
;; function runs a command's items (or the items of a read's commands) in order, as the
;; JavaScript loops of cuckoo-filter.ts and cuckoo-buckets.ts would: the same slots, the same kicks.
;; `npm run build:wasm` turns this file into cuckoo-kernel-module.ts.
;;
;; The scratch area (filter-batch.ts) holds the items and their descriptors (u32 offset, u32
;; length); the sub-filter table, oldest first, is `filters` entries of (u32 offset, u32 mask), the
;; mask being the sub-filter's bucket count less one; each item's result is an i32 in `out`.
;;
;; An item's MurmurHash64A (seed 0) gives its fingerprint `hash % 255 + 1` and its two bucket
;; hashes: the low 32 bits of the hash, and that ^ (fingerprint * 0x5bd1e995) (cuckoo.c
;; getLookupParams, getAltHash); a bucket is `hash & mask`.
(module
  (import "env" "memory" (memory 1 65536 shared))

  (global $m i64 (i64.const 0xc6a4a7935bd1e995))
  ;; The lookup parameters of the current item (set by $lookup).
  (global $fp (mut i32) (i32.const 0))
  (global $h1 (mut i32) (i32.const 0))
  (global $h2 (mut i32) (i32.const 0))
  ;; What $touch read, kept so that its loads stay.
  (global $sink (mut i32) (i32.const 0))
  ;; From an item's descriptor to where $touch keeps its lookup parameters (low 32 bits of the
  ;; hash, fingerprint) for the walk after it: cuckoo-batch.ts PARAMS - DESC.
  (global $params i32 (i32.const 12800))

  ;; MurmurHash64A (deps/murmur2/MurmurHash2.c) of memory[p, p + len), seed 0: bloom-kernel.wat's,
  ;; the tail bytes loaded as one word with the bytes past the item masked off.
  (func $murmur64a (param $p i32) (param $len i32) (result i64)
    (local $h i64) (local $k i64) (local $end i32) (local $tail i32)
    (local.set $h (i64.mul (i64.extend_i32_u (local.get $len)) (global.get $m)))
    (local.set $end (i32.add (local.get $p) (i32.and (local.get $len) (i32.const -8))))
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $k (i64.mul (i64.load (local.get $p)) (global.get $m)))
        (local.set $k (i64.mul (i64.xor (local.get $k) (i64.shr_u (local.get $k) (i64.const 47))) (global.get $m)))
        (local.set $h (i64.mul (i64.xor (local.get $h) (local.get $k)) (global.get $m)))
        (local.set $p (i32.add (local.get $p) (i32.const 8)))
        (br $blocks)))
    (local.set $tail (i32.and (local.get $len) (i32.const 7)))
    (if (local.get $tail)
      (then
        (local.set $h (i64.mul
          (i64.xor (local.get $h) (i64.and (i64.load (local.get $p))
            (i64.shr_u (i64.const -1) (i64.extend_i32_u (i32.sub (i32.const 64) (i32.shl (local.get $tail) (i32.const 3)))))))
          (global.get $m)))))
    (local.set $h (i64.mul (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 47))) (global.get $m)))
    (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 47))))

  ;; The lookup parameters of the item described at `desc`.
  (func $lookup (param $desc i32)
    (local $hash i64) (local $fp i32)
    (local.set $hash (call $murmur64a (i32.load (local.get $desc)) (i32.load offset=4 (local.get $desc))))
    (local.set $fp (i32.add (i32.wrap_i64 (i64.rem_u (local.get $hash) (i64.const 255))) (i32.const 1)))
    (global.set $fp (local.get $fp))
    (global.set $h1 (i32.wrap_i64 (local.get $hash)))
    (global.set $h2 (i32.xor (global.get $h1) (i32.mul (local.get $fp) (i32.const 0x5bd1e995)))))

  ;; The lookup parameters $touch kept for the item described at `desc`.
  (func $recall (param $desc i32)
    (local $at i32)
    (local.set $at (i32.add (local.get $desc) (global.get $params)))
    (global.set $h1 (i32.load (local.get $at)))
    (global.set $fp (i32.load offset=4 (local.get $at)))
    (global.set $h2 (i32.xor (global.get $h1) (i32.mul (global.get $fp) (i32.const 0x5bd1e995)))))

  ;; The address of the slot holding `fp` in the bucket at `at` of `size` slots, or -1 (Bucket_Find).
  (func $find (param $at i32) (param $size i32) (param $fp i32) (result i32)
    (local $end i32)
    (local.set $end (i32.add (local.get $at) (local.get $size)))
    (block $none
      (loop $slots
        (br_if $none (i32.ge_u (local.get $at) (local.get $end)))
        (if (i32.eq (i32.load8_u (local.get $at)) (local.get $fp)) (then (return (local.get $at))))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br $slots)))
    (i32.const -1))

  ;; Slots of the bucket at `at` holding `fp` (bucketCount).
  (func $countIn (param $at i32) (param $size i32) (param $fp i32) (result i32)
    (local $end i32) (local $count i32)
    (local.set $end (i32.add (local.get $at) (local.get $size)))
    (block $done
      (loop $slots
        (br_if $done (i32.ge_u (local.get $at) (local.get $end)))
        (local.set $count (i32.add (local.get $count) (i32.eq (i32.load8_u (local.get $at)) (local.get $fp))))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br $slots)))
    (local.get $count))

  ;; The bucket of hash `h` in the sub-filter of table entry `entry`: its address.
  (func $bucket (param $entry i32) (param $h i32) (param $size i32) (result i32)
    (i32.add (i32.load (local.get $entry))
      (i32.mul (i32.and (local.get $h) (i32.load offset=4 (local.get $entry))) (local.get $size))))

  ;; Reads the first byte of both buckets of every item 0..n-1 in every sub-filter, before a
  ;; function walks them in order: these loads depend on nothing but the item, so the cache
  ;; misses of a batch's items (a filter of a few MiB is mostly out of the cache) are in flight
  ;; together, where the walk, branching on each slot, would wait for them one by one.
  (func $touch (param $desc i32) (param $n i32) (param $table i32) (param $filters i32) (param $size i32)
    (local $j i32) (local $i i32) (local $entry i32) (local $sum i32) (local $at i32)
    (block $done
      (loop $items
        (br_if $done (i32.ge_u (local.get $j) (local.get $n)))
        (local.set $at (i32.add (local.get $desc) (i32.shl (local.get $j) (i32.const 3))))
        (call $lookup (local.get $at))
        (local.set $at (i32.add (local.get $at) (global.get $params)))
        (i32.store (local.get $at) (global.get $h1))
        (i32.store offset=4 (local.get $at) (global.get $fp))
        (local.set $i (i32.const 0))
        (block $all
          (loop $subs
            (br_if $all (i32.ge_u (local.get $i) (local.get $filters)))
            (local.set $entry (i32.add (local.get $table) (i32.shl (local.get $i) (i32.const 3))))
            (local.set $sum (i32.add (local.get $sum) (i32.add
              (i32.load8_u (call $bucket (local.get $entry) (global.get $h1) (local.get $size)))
              (i32.load8_u (call $bucket (local.get $entry) (global.get $h2) (local.get $size))))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $subs)))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $items)))
    (global.set $sink (local.get $sum)))

  ;; `fp` in bucket h1, else in bucket h2, of table entry `entry`: the slot's address or -1.
  (func $findEither (param $entry i32) (param $size i32) (param $fp i32) (result i32)
    (local $slot i32)
    (local.set $slot (call $find (call $bucket (local.get $entry) (global.get $h1) (local.get $size)) (local.get $size) (local.get $fp)))
    (if (i32.ne (local.get $slot) (i32.const -1)) (then (return (local.get $slot))))
    (call $find (call $bucket (local.get $entry) (global.get $h2) (local.get $size)) (local.get $size) (local.get $fp)))

  ;; CF.EXISTS / CF.MEXISTS (CuckooFilter_Check) for items 0..n-1: out[j] = 1 when some
  ;; sub-filter, oldest first, holds the fingerprint in either bucket, else 0. Returns how many.
  (func (export "cfCheck") (param $desc i32) (param $n i32) (param $table i32) (param $filters i32) (param $size i32) (param $out i32) (result i32)
    (local $j i32) (local $i i32) (local $found i32) (local $hit i32)
    (call $touch (local.get $desc) (local.get $n) (local.get $table) (local.get $filters) (local.get $size))
    (block $done
      (loop $items
        (br_if $done (i32.ge_u (local.get $j) (local.get $n)))
        (call $recall (i32.add (local.get $desc) (i32.shl (local.get $j) (i32.const 3))))
        (local.set $hit (i32.const 0))
        (local.set $i (i32.const 0))
        (block $seen
          (loop $subs
            (br_if $seen (i32.ge_u (local.get $i) (local.get $filters)))
            (if (i32.ne (call $findEither (i32.add (local.get $table) (i32.shl (local.get $i) (i32.const 3))) (local.get $size) (global.get $fp)) (i32.const -1))
              (then
                (local.set $hit (i32.const 1))
                (br $seen)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $subs)))
        (i32.store (i32.add (local.get $out) (i32.shl (local.get $j) (i32.const 2))) (local.get $hit))
        (local.set $found (i32.add (local.get $found) (local.get $hit)))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $items)))
    (local.get $found))

  ;; CF.COUNT (CuckooFilter_Count) for items 0..n-1: out[j] = the matching slots of both buckets
  ;; of every sub-filter (one bucket twice when the two coincide).
  (func (export "cfCount") (param $desc i32) (param $n i32) (param $table i32) (param $filters i32) (param $size i32) (param $out i32)
    (local $j i32) (local $i i32) (local $count i32) (local $entry i32)
    (block $done
      (loop $items
        (br_if $done (i32.ge_u (local.get $j) (local.get $n)))
        (call $lookup (i32.add (local.get $desc) (i32.shl (local.get $j) (i32.const 3))))
        (local.set $count (i32.const 0))
        (local.set $i (i32.const 0))
        (block $all
          (loop $subs
            (br_if $all (i32.ge_u (local.get $i) (local.get $filters)))
            (local.set $entry (i32.add (local.get $table) (i32.shl (local.get $i) (i32.const 3))))
            (local.set $count (i32.add (local.get $count)
              (call $countIn (call $bucket (local.get $entry) (global.get $h1) (local.get $size)) (local.get $size) (global.get $fp))))
            (local.set $count (i32.add (local.get $count)
              (call $countIn (call $bucket (local.get $entry) (global.get $h2) (local.get $size)) (local.get $size) (global.get $fp))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $subs)))
        (i32.store (i32.add (local.get $out) (i32.shl (local.get $j) (i32.const 2))) (local.get $count))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $items)))
  )

  ;; CF.DEL (CuckooFilter_Delete) for items 0..n-1 in order: the first slot holding the
  ;; fingerprint, newest sub-filter first, bucket h1 before h2, is emptied; out[j] = that
  ;; sub-filter's index, or -1 when none held it. Stops after the `limit`-th delete (the caller
  ;; compacts the filter or updates its counters there). Returns the items handled.
  (func (export "cfDelete") (param $desc i32) (param $n i32) (param $table i32) (param $filters i32) (param $size i32) (param $out i32) (param $limit i32) (result i32)
    (local $j i32) (local $i i32) (local $slot i32) (local $where i32) (local $deleted i32)
    (call $touch (local.get $desc) (local.get $n) (local.get $table) (local.get $filters) (local.get $size))
    (block $done
      (loop $items
        (br_if $done (i32.ge_u (local.get $j) (local.get $n)))
        (call $recall (i32.add (local.get $desc) (i32.shl (local.get $j) (i32.const 3))))
        (local.set $where (i32.const -1))
        (local.set $i (local.get $filters))
        (block $seen
          (loop $subs
            (br_if $seen (i32.eqz (local.get $i)))
            (local.set $i (i32.sub (local.get $i) (i32.const 1)))
            (local.set $slot (call $findEither (i32.add (local.get $table) (i32.shl (local.get $i) (i32.const 3))) (local.get $size) (global.get $fp)))
            (if (i32.ne (local.get $slot) (i32.const -1))
              (then
                (i32.store8 (local.get $slot) (i32.const 0))
                (local.set $where (local.get $i))
                (br $seen)))
            (br $subs)))
        (i32.store (i32.add (local.get $out) (i32.shl (local.get $j) (i32.const 2))) (local.get $where))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (if (i32.ne (local.get $where) (i32.const -1))
          (then
            (local.set $deleted (i32.add (local.get $deleted) (i32.const 1)))
            (br_if $done (i32.ge_u (local.get $deleted) (local.get $limit)))))
        (br $items)))
    (local.get $j))

  ;; The first empty slot of bucket h1, then of bucket h2, of table entry `entry`, or -1 (Filter_FindAvailable).
  (func $freeEither (param $entry i32) (param $size i32) (result i32)
    (call $findEither (local.get $entry) (local.get $size) (i32.const 0)))

  ;; cuckoo.c Filter_KOInsert in the sub-filter of table entry `entry` (cuckoo-buckets.ts
  ;; kickInsert): 1 when the carried fingerprints found a slot, else 0 with every swap undone.
  (func $kick (param $entry i32) (param $size i32) (param $maxIterations i32) (param $fp i32) (result i32)
    (local $base i32) (local $mask i32) (local $victim i32) (local $index i32) (local $carried i32)
    (local $step i32) (local $slot i32) (local $displaced i32) (local $empty i32)
    (local.set $base (i32.load (local.get $entry)))
    (local.set $mask (i32.load offset=4 (local.get $entry)))
    (local.set $index (i32.and (global.get $h1) (local.get $mask)))
    (local.set $carried (local.get $fp))
    (block $failed
      (loop $walk
        (br_if $failed (i32.ge_u (local.get $step) (local.get $maxIterations)))
        (local.set $slot (i32.add (i32.add (local.get $base) (i32.mul (local.get $index) (local.get $size))) (local.get $victim)))
        (local.set $displaced (i32.load8_u (local.get $slot)))
        (i32.store8 (local.get $slot) (local.get $carried))
        (local.set $carried (local.get $displaced))
        (local.set $index (i32.and (i32.xor (local.get $index) (i32.mul (local.get $carried) (i32.const 0x5bd1e995))) (local.get $mask)))
        (local.set $empty (call $find (i32.add (local.get $base) (i32.mul (local.get $index) (local.get $size))) (local.get $size) (i32.const 0)))
        (if (i32.ne (local.get $empty) (i32.const -1))
          (then
            (i32.store8 (local.get $empty) (local.get $carried))
            (return (i32.const 1))))
        (local.set $victim (i32.rem_u (i32.add (local.get $victim) (i32.const 1)) (local.get $size)))
        (local.set $step (i32.add (local.get $step) (i32.const 1)))
        (br $walk)))
    ;; The roll back, as RedisBloom writes it (cuckoo-buckets.ts kickInsert).
    (local.set $step (i32.const 0))
    (block $undone
      (loop $back
        (br_if $undone (i32.ge_u (local.get $step) (local.get $maxIterations)))
        (local.set $victim (i32.rem_u (i32.sub (i32.add (local.get $victim) (local.get $size)) (i32.const 1)) (local.get $size)))
        (local.set $index (i32.and (i32.xor (local.get $index) (i32.mul (local.get $carried) (i32.const 0x5bd1e995))) (local.get $mask)))
        (local.set $slot (i32.add (i32.add (local.get $base) (i32.mul (local.get $index) (local.get $size))) (local.get $victim)))
        (local.set $displaced (i32.load8_u (local.get $slot)))
        (i32.store8 (local.get $slot) (local.get $carried))
        (local.set $carried (local.get $displaced))
        (local.set $step (i32.add (local.get $step) (i32.const 1)))
        (br $back)))
    (i32.const 0))

  ;; CF.ADD (CuckooFilter_Insert) for items 0..n-1 in order: into the first empty slot of either
  ;; bucket, newest sub-filter first, else by a kick walk in the newest; out[j] = the index of the
  ;; sub-filter that took it. Stops at the first item neither places (the buckets as they were):
  ;; the caller grows the filter or answers it full. Returns the items placed.
  (func (export "cfAdd") (param $desc i32) (param $n i32) (param $table i32) (param $filters i32) (param $size i32) (param $maxIterations i32) (param $out i32) (result i32)
    (local $j i32) (local $i i32) (local $slot i32) (local $newest i32)
    (local.set $newest (i32.add (local.get $table) (i32.shl (i32.sub (local.get $filters) (i32.const 1)) (i32.const 3))))
    ;; The newest sub-filter's buckets only: an add tries it first, and it has room nearly always.
    (call $touch (local.get $desc) (local.get $n) (local.get $newest) (i32.const 1) (local.get $size))
    (block $done
      (loop $items
        (br_if $done (i32.ge_u (local.get $j) (local.get $n)))
        (call $recall (i32.add (local.get $desc) (i32.shl (local.get $j) (i32.const 3))))
        (local.set $i (local.get $filters))
        (block $placed
          (loop $subs
            (if (i32.eqz (local.get $i))
              (then
                (br_if $done (i32.eqz (call $kick (local.get $newest) (local.get $size) (local.get $maxIterations) (global.get $fp))))
                (local.set $i (i32.sub (local.get $filters) (i32.const 1)))
                (br $placed)))
            (local.set $i (i32.sub (local.get $i) (i32.const 1)))
            (local.set $slot (call $freeEither (i32.add (local.get $table) (i32.shl (local.get $i) (i32.const 3))) (local.get $size)))
            (if (i32.ne (local.get $slot) (i32.const -1))
              (then
                (i32.store8 (local.get $slot) (global.get $fp))
                (br $placed)))
            (br $subs)))
        (i32.store (i32.add (local.get $out) (i32.shl (local.get $j) (i32.const 2))) (local.get $i))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $items)))
    (local.get $j))

  ;; cuckoo.c CuckooFilter_CompactSingle on sub-filter `index` of the table (cuckoo-filter.ts
  ;; compactOne): each fingerprint, in slot order, moves to the first older sub-filter with an
  ;; empty slot in the bucket of its own bucket's index, else in that index's alternate; out[i]
  ;; (i < index) counts those moved into sub-filter i. Eight empty slots are skipped at a time (a
  ;; newest sub-filter is mostly empty when CF.DEL compacts it). Returns 1 when every one moved.
  (func (export "cfCompactOne") (param $table i32) (param $index i32) (param $size i32) (param $out i32) (result i32)
    (local $entry i32) (local $base i32) (local $bytes i32) (local $slot i32) (local $fp i32) (local $bucket i32)
    (local $alt i32) (local $i i32) (local $free i32) (local $emptied i32)
    (local.set $entry (i32.add (local.get $table) (i32.shl (local.get $index) (i32.const 3))))
    (local.set $base (i32.load (local.get $entry)))
    (local.set $bytes (i32.mul (i32.add (i32.load offset=4 (local.get $entry)) (i32.const 1)) (local.get $size)))
    (local.set $emptied (i32.const 1))
    (block $done
      (loop $slots
        (br_if $done (i32.ge_u (local.get $slot) (local.get $bytes)))
        (if (i32.and
              (i32.le_u (i32.add (local.get $slot) (i32.const 8)) (local.get $bytes))
              (i64.eqz (i64.load (i32.add (local.get $base) (local.get $slot)))))
          (then
            (local.set $slot (i32.add (local.get $slot) (i32.const 8)))
            (br $slots)))
        (local.set $fp (i32.load8_u (i32.add (local.get $base) (local.get $slot))))
        (if (local.get $fp)
          (then
            (local.set $bucket (i32.div_u (local.get $slot) (local.get $size)))
            (local.set $alt (i32.xor (local.get $bucket) (i32.mul (local.get $fp) (i32.const 0x5bd1e995))))
            (local.set $free (i32.const -1))
            (local.set $i (i32.const 0))
            (block $placed
              (loop $older
                (br_if $placed (i32.ge_u (local.get $i) (local.get $index)))
                (local.set $entry (i32.add (local.get $table) (i32.shl (local.get $i) (i32.const 3))))
                (local.set $free (call $find (call $bucket (local.get $entry) (local.get $bucket) (local.get $size)) (local.get $size) (i32.const 0)))
                (if (i32.eq (local.get $free) (i32.const -1))
                  (then (local.set $free (call $find (call $bucket (local.get $entry) (local.get $alt) (local.get $size)) (local.get $size) (i32.const 0)))))
                (br_if $placed (i32.ne (local.get $free) (i32.const -1)))
                (local.set $i (i32.add (local.get $i) (i32.const 1)))
                (br $older)))
            (if (i32.eq (local.get $free) (i32.const -1))
              (then (local.set $emptied (i32.const 0)))
              (else
                (i32.store8 (local.get $free) (local.get $fp))
                (i32.store8 (i32.add (local.get $base) (local.get $slot)) (i32.const 0))
                (i32.store (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2)))
                  (i32.add (i32.load (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2)))) (i32.const 1)))))))
        (local.set $slot (i32.add (local.get $slot) (i32.const 1)))
        (br $slots)))
    (local.get $emptied))
)
