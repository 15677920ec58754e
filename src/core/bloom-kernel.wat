;; The Bloom data plane of one arena (arena.ts): hashes a command's items with RedisBloom 2.4's two
;; MurmurHash64A calls (deps/bloom/bloom.c `bloom_calc_hash64`) and tests or sets their positions
;; `(a + i * b) mod 2^64 mod m` (bloom.c `CHECK_ADD_FUNC`) in bitmaps of the same memory.
;; `npm run build:wasm` turns this file into bloom-kernel-module.ts.
;;
;; The memory is the arena's, imported, and never grows (the module has no memory.grow): a view
;; of it taken in JavaScript stays valid for the arena's life. Its first bytes are the scratch
;; area of filter-batch.ts: item descriptors (u32 offset, u32 length), the items, hash pairs
;; (u64 a, u64 b), one flag byte per item and a result word; the bitmaps follow.
;;
;; Flags: 0 nothing known yet, 1 added by this call, 2 present (some layer has every position).
(module
  (import "env" "memory" (memory 1 65536 shared))

  (global $m i64 (i64.const 0xc6a4a7935bd1e995))

  ;; MurmurHash64A (deps/murmur2/MurmurHash2.c `MurmurHash64A_Bloom`) of memory[p, p + len).
  (func $murmur64a (param $p i32) (param $len i32) (param $seed i64) (result i64)
    (local $h i64) (local $k i64) (local $end i32) (local $tail i32)
    (local.set $h (i64.xor (local.get $seed) (i64.mul (i64.extend_i32_u (local.get $len)) (global.get $m))))
    (local.set $end (i32.add (local.get $p) (i32.and (local.get $len) (i32.const -8))))
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $k (i64.mul (i64.load (local.get $p)) (global.get $m)))
        (local.set $k (i64.mul (i64.xor (local.get $k) (i64.shr_u (local.get $k) (i64.const 47))) (global.get $m)))
        (local.set $h (i64.mul (i64.xor (local.get $h) (local.get $k)) (global.get $m)))
        (local.set $p (i32.add (local.get $p) (i32.const 8)))
        (br $blocks)))
    ;; The 1..7 tail bytes, which the C switch xors in one by one: one load, the bytes past the
    ;; item masked off (the scratch area keeps 8 bytes after the last item, so the load stays in).
    (local.set $tail (i32.and (local.get $len) (i32.const 7)))
    (if (local.get $tail)
      (then
        (local.set $h (i64.mul
          (i64.xor (local.get $h) (i64.and (i64.load (local.get $p))
            (i64.shr_u (i64.const -1) (i64.extend_i32_u (i32.sub (i32.const 64) (i32.shl (local.get $tail) (i32.const 3)))))))
          (global.get $m)))))
    (local.set $h (i64.mul (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 47))) (global.get $m)))
    (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 47))))

  ;; For items 0..n-1 described at `desc` (u32 offset, u32 length each): the pair a, b at
  ;; pairs + 16 i, a = MurmurHash64A(item, 0xc6a4a7935bd1e995), b = MurmurHash64A(item, a).
  (func $hashItems (export "hashItems") (param $desc i32) (param $n i32) (param $pairs i32)
    (local $i i32) (local $p i32) (local $len i32) (local $a i64)
    (block $done
      (loop $items
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $p (i32.load (local.get $desc)))
        (local.set $len (i32.load offset=4 (local.get $desc)))
        (local.set $a (call $murmur64a (local.get $p) (local.get $len) (global.get $m)))
        (i64.store (local.get $pairs) (local.get $a))
        (i64.store offset=8 (local.get $pairs) (call $murmur64a (local.get $p) (local.get $len) (local.get $a)))
        (local.set $desc (i32.add (local.get $desc) (i32.const 8)))
        (local.set $pairs (i32.add (local.get $pairs) (i32.const 16)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $items))))

  ;; 2^64 mod m: (2^64 - m) mod m, one division.
  (func $wrapOf (param $m i64) (result i64)
    (i64.rem_u (i64.sub (i64.const 0) (local.get $m)) (local.get $m)))

  ;; Whether every one of the k positions of the pair at `pair` is set in the bitmap at `bitmap`
  ;; of m bits (bloom.c `bloom_check_h`). It returns early only when the first position is clear
  ;; (nearly every absent item while the layer is sparse: a well-predicted exit); the other k - 1
  ;; bytes are loaded without a branch on any of them, so the loads of one item, and of the items
  ;; after it, are in flight together (a branch on each bit would be a coin toss for an absent
  ;; item in a fuller layer, and wait for its cache miss). The answer is bloom.c's either way.
  ;; Positions step by additions: pos += b mod m, or (b - 2^64) mod m when `x += b` wraps (x < b
  ;; after it), then one select brings pos back into [0, m): no division after the first two (one
  ;; for an item whose first position is clear: the step is computed after that bit). A
  ;; bit is read as bit (pos mod 32) of the little-endian word holding it (the shift takes the
  ;; count mod 32 by itself). The word is inside the bitmap: the kernel serves RedisBloom layers
  ;; only, whole 64-bit words each (scalable-filter.ts refuses others).
  (func $has (param $pair i32) (param $bitmap i32) (param $m i64) (param $k i32) (param $wrap i64) (result i32)
    (local $x i64) (local $b i64) (local $pos i64) (local $step i64) (local $stepw i64) (local $p i64) (local $all i32)
    (if (i32.eqz (local.get $k)) (then (return (i32.const 1))))
    (local.set $x (i64.load (local.get $pair)))
    (local.set $pos (i64.rem_u (local.get $x) (local.get $m)))
    (if (i32.eqz (i32.and
          (i32.load8_u (i32.add (local.get $bitmap) (i32.wrap_i64 (i64.shr_u (local.get $pos) (i64.const 3)))))
          (i32.shl (i32.const 1) (i32.and (i32.wrap_i64 (local.get $pos)) (i32.const 7)))))
      (then (return (i32.const 0))))
    ;; The step only now: an item whose first position is clear costs one division, not two.
    (local.set $b (i64.load offset=8 (local.get $pair)))
    (local.set $step (i64.rem_u (local.get $b) (local.get $m)))
    (local.set $stepw (i64.sub (local.get $step) (local.get $wrap)))
    (local.set $stepw (select (i64.add (local.get $stepw) (local.get $m)) (local.get $stepw) (i64.lt_s (local.get $stepw) (i64.const 0))))
    (local.set $all (i32.const 1))
    (block $done
      (loop $probes
        (br_if $done (i32.eqz (local.get $k)))
        (local.set $all (i32.and (local.get $all) (i32.shr_u
          (i32.load (i32.add (local.get $bitmap) (i32.and (i32.wrap_i64 (i64.shr_u (local.get $pos) (i64.const 3))) (i32.const -4))))
          (i32.wrap_i64 (local.get $pos)))))
        (local.set $x (i64.add (local.get $x) (local.get $b)))
        (local.set $p (i64.add (local.get $pos) (select (local.get $stepw) (local.get $step) (i64.lt_u (local.get $x) (local.get $b)))))
        (local.set $pos (select (i64.sub (local.get $p) (local.get $m)) (local.get $p) (i64.ge_u (local.get $p) (local.get $m))))
        (local.set $k (i32.sub (local.get $k) (i32.const 1)))
        (br $probes)))
    (i32.and (local.get $all) (i32.const 1)))

  ;; Sets the k positions of the pair at `pair` (bloom.c `bloom_add_h`); returns the bits it
  ;; turned on (0: every one was set already). No branch on a bit's old value; each byte is read
  ;; after the previous position's write (two positions may share a byte, or be the same bit).
  (func $set (param $pair i32) (param $bitmap i32) (param $m i64) (param $k i32) (param $wrap i64) (result i32)
    (local $x i64) (local $b i64) (local $pos i64) (local $step i64) (local $stepw i64) (local $p i64)
    (local $at i32) (local $bit i32) (local $old i32) (local $flipped i32)
    (local.set $x (i64.load (local.get $pair)))
    (local.set $b (i64.load offset=8 (local.get $pair)))
    (local.set $pos (i64.rem_u (local.get $x) (local.get $m)))
    (local.set $step (i64.rem_u (local.get $b) (local.get $m)))
    (local.set $stepw (i64.sub (local.get $step) (local.get $wrap)))
    (local.set $stepw (select (i64.add (local.get $stepw) (local.get $m)) (local.get $stepw) (i64.lt_s (local.get $stepw) (i64.const 0))))
    (block $done
      (loop $probes
        (br_if $done (i32.eqz (local.get $k)))
        (local.set $at (i32.add (local.get $bitmap) (i32.wrap_i64 (i64.shr_u (local.get $pos) (i64.const 3)))))
        (local.set $bit (i32.and (i32.wrap_i64 (local.get $pos)) (i32.const 7)))
        (local.set $old (i32.load8_u (local.get $at)))
        (i32.store8 (local.get $at) (i32.or (local.get $old) (i32.shl (i32.const 1) (local.get $bit))))
        (local.set $flipped (i32.add (local.get $flipped)
          (i32.xor (i32.and (i32.shr_u (local.get $old) (local.get $bit)) (i32.const 1)) (i32.const 1))))
        (local.set $x (i64.add (local.get $x) (local.get $b)))
        (local.set $p (i64.add (local.get $pos) (select (local.get $stepw) (local.get $step) (i64.lt_u (local.get $x) (local.get $b)))))
        (local.set $pos (select (i64.sub (local.get $p) (local.get $m)) (local.get $p) (i64.ge_u (local.get $p) (local.get $m))))
        (local.set $k (i32.sub (local.get $k) (i32.const 1)))
        (br $probes)))
    (local.get $flipped))

  ;; For each item i < n whose flag is 0: flag 2 when the layer (bitmap, m bits, k hashes) has all
  ;; its positions. Returns how many it found.
  (func $checkLayer (export "checkLayer") (param $pairs i32) (param $flags i32) (param $n i32)
    (param $bitmap i32) (param $mBits f64) (param $k i32) (result i32)
    (local $i i32) (local $m i64) (local $wrap i64) (local $found i32)
    (local.set $m (i64.trunc_f64_u (local.get $mBits)))
    (local.set $wrap (call $wrapOf (local.get $m)))
    (block $done
      (loop $items
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (if (i32.eqz (i32.load8_u (i32.add (local.get $flags) (local.get $i))))
          (then
            (if (call $has (i32.add (local.get $pairs) (i32.shl (local.get $i) (i32.const 4)))
                  (local.get $bitmap) (local.get $m) (local.get $k) (local.get $wrap))
              (then
                (i32.store8 (i32.add (local.get $flags) (local.get $i)) (i32.const 2))
                (local.set $found (i32.add (local.get $found) (i32.const 1)))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $items)))
    (local.get $found))

  ;; sb.c `SBChain_Add` on the newest layer, from item `from` on: an item flagged 2 (an older layer
  ;; has it) is left alone; any other is set, flagged 1 when it turned a bit on (then it counts
  ;; against `room`, the items the layer still takes) and 2 otherwise. Stops after the item that
  ;; fills the layer. Returns the index of the first item not handled; the bits turned on are
  ;; added to the u32 at `result`, the items flagged 1 to the u32 at result + 4.
  (func $addLayer (export "addLayer") (param $pairs i32) (param $flags i32) (param $from i32) (param $n i32)
    (param $bitmap i32) (param $mBits f64) (param $k i32) (param $room i32) (param $result i32) (result i32)
    (local $i i32) (local $m i64) (local $wrap i64) (local $flipped i32) (local $bits i32) (local $added i32)
    (local.set $m (i64.trunc_f64_u (local.get $mBits)))
    (local.set $wrap (call $wrapOf (local.get $m)))
    (local.set $i (local.get $from))
    (block $done
      (loop $items
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (br_if $done (i32.ge_u (local.get $added) (local.get $room)))
        (if (i32.eqz (i32.load8_u (i32.add (local.get $flags) (local.get $i))))
          (then
            ;; Present already: no write, so no cache line is dirtied (bloom.c test_bit_set_bit
            ;; writes only clear bits). New: the check stopped at its first clear bit, and every
            ;; position is set without a branch on its old value.
            (local.set $flipped (i32.const 0))
            (if (i32.eqz (call $has (i32.add (local.get $pairs) (i32.shl (local.get $i) (i32.const 4)))
                  (local.get $bitmap) (local.get $m) (local.get $k) (local.get $wrap)))
              (then
                (local.set $flipped (call $set (i32.add (local.get $pairs) (i32.shl (local.get $i) (i32.const 4)))
                  (local.get $bitmap) (local.get $m) (local.get $k) (local.get $wrap)))))
            (local.set $bits (i32.add (local.get $bits) (local.get $flipped)))
            (local.set $added (i32.add (local.get $added) (i32.ne (local.get $flipped) (i32.const 0))))
            (i32.store8 (i32.add (local.get $flags) (local.get $i))
              (select (i32.const 1) (i32.const 2) (local.get $flipped)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $items)))
    (i32.store (local.get $result) (i32.add (i32.load (local.get $result)) (local.get $bits)))
    (i32.store offset=4 (local.get $result) (i32.add (i32.load offset=4 (local.get $result)) (local.get $added)))
    (local.get $i))

  ;; A command on a filter of one layer in one call: hashItems, then each item's flag, 2 when the
  ;; layer has all its positions, else 0 (checkLayer with every flag 0 at first, so no pass
  ;; clears them). Hashing every item before the first probe leaves the probe loop short enough
  ;; that several items' cache misses are in flight together (hashing and probing item by item
  ;; was slower on layers beyond the caches). Returns how many the layer has.
  (func (export "hashCheck") (param $desc i32) (param $n i32) (param $pairs i32) (param $flags i32)
    (param $bitmap i32) (param $mBits f64) (param $k i32) (result i32)
    (local $i i32) (local $m i64) (local $wrap i64) (local $in i32) (local $found i32)
    (local.set $m (i64.trunc_f64_u (local.get $mBits)))
    (local.set $wrap (call $wrapOf (local.get $m)))
    (call $hashItems (local.get $desc) (local.get $n) (local.get $pairs))
    (block $done
      (loop $items
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $in (call $has (local.get $pairs) (local.get $bitmap) (local.get $m) (local.get $k) (local.get $wrap)))
        (i32.store8 (i32.add (local.get $flags) (local.get $i)) (i32.shl (local.get $in) (i32.const 1)))
        (local.set $found (i32.add (local.get $found) (local.get $in)))
        (local.set $pairs (i32.add (local.get $pairs) (i32.const 16)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $items)))
    (local.get $found))

  ;; Likewise for an add: hashItems, then addLayer's step for each item (every flag 0 at first):
  ;; set when the layer lacks one of its positions, flagged 1, counted against `room`; flagged 2
  ;; otherwise. Stops after the item that fills the layer; returns the index of the first item
  ;; not handled, and adds to the result words as addLayer does.
  (func (export "hashAdd") (param $desc i32) (param $n i32) (param $pairs i32) (param $flags i32)
    (param $bitmap i32) (param $mBits f64) (param $k i32) (param $room i32) (param $result i32) (result i32)
    (local $i i32) (local $m i64) (local $wrap i64)
    (local $flipped i32) (local $bits i32) (local $added i32)
    (local.set $m (i64.trunc_f64_u (local.get $mBits)))
    (local.set $wrap (call $wrapOf (local.get $m)))
    (call $hashItems (local.get $desc) (local.get $n) (local.get $pairs))
    (block $done
      (loop $items
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (br_if $done (i32.ge_u (local.get $added) (local.get $room)))
        ;; Present already: no write, so no cache line is dirtied (bloom.c test_bit_set_bit).
        (local.set $flipped (i32.const 0))
        (if (i32.eqz (call $has (local.get $pairs) (local.get $bitmap) (local.get $m) (local.get $k) (local.get $wrap)))
          (then (local.set $flipped (call $set (local.get $pairs) (local.get $bitmap) (local.get $m) (local.get $k) (local.get $wrap)))))
        (local.set $bits (i32.add (local.get $bits) (local.get $flipped)))
        (local.set $added (i32.add (local.get $added) (i32.ne (local.get $flipped) (i32.const 0))))
        (i32.store8 (i32.add (local.get $flags) (local.get $i)) (select (i32.const 1) (i32.const 2) (local.get $flipped)))
        (local.set $pairs (i32.add (local.get $pairs) (i32.const 16)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $items)))
    (i32.store (local.get $result) (i32.add (i32.load (local.get $result)) (local.get $bits)))
    (i32.store offset=4 (local.get $result) (i32.add (i32.load offset=4 (local.get $result)) (local.get $added)))
    (local.get $i))

  ;; ---- Layers of several pieces (arena.ts allocatePieces): a layer larger than one memory ----
  ;; Its bitmap is split in pieces, each in a memory of its own with a list area before it; the
  ;; piece in a memory holds the layer's bits [lo, lo + span) from byte `bitmap`. Positions are
  ;; bloom.c's over the whole layer (m bits), stepped as $has and $set step them. A check or an add
  ;; is one call per piece (checkPiece, addPiece), the flags carrying the outcome from one piece to
  ;; the next (filter-batch.ts): the call lists the items' positions that fall in its piece
  ;; ($listPiece), then tests or sets them ($checkList, $addList). The listing has no cache misses,
  ;; and the test-or-set loop is a few instructions per position, so the misses of many items are
  ;; in flight together (walking every position of every item in each piece's pass, testing only
  ;; those in the piece, kept fewer misses in flight: 2 pieces cost twice 1, bench/big-layer).

  ;; For each item i < n whose flag ANDed with `skip` is 0, an entry (rel << 16 | i), i64, at
  ;; `list` for each of its positions p in [lo, lo + span), rel = p - lo, in item order. Returns the
  ;; entries written (the caller leaves room for n * k).
  (func $listPiece (param $pairs i32) (param $flags i32) (param $n i32) (param $mBits f64) (param $k i32)
    (param $loBits f64) (param $spanBits f64) (param $skip i32) (param $list i32) (result i32)
    (local $i i32) (local $m i64) (local $wrap i64) (local $lo i64) (local $span i64) (local $out i32)
    (local $x i64) (local $b i64) (local $pos i64) (local $step i64) (local $stepw i64) (local $p i64) (local $rel i64) (local $j i32)
    (local.set $m (i64.trunc_f64_u (local.get $mBits)))
    (local.set $wrap (call $wrapOf (local.get $m)))
    (local.set $lo (i64.trunc_f64_u (local.get $loBits)))
    (local.set $span (i64.trunc_f64_u (local.get $spanBits)))
    (local.set $out (local.get $list))
    (block $done
      (loop $items
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (if (i32.eqz (i32.and (i32.load8_u (i32.add (local.get $flags) (local.get $i))) (local.get $skip)))
          (then
            (local.set $x (i64.load (local.get $pairs)))
            (local.set $b (i64.load offset=8 (local.get $pairs)))
            (local.set $pos (i64.rem_u (local.get $x) (local.get $m)))
            (local.set $step (i64.rem_u (local.get $b) (local.get $m)))
            (local.set $stepw (i64.sub (local.get $step) (local.get $wrap)))
            (local.set $stepw (select (i64.add (local.get $stepw) (local.get $m)) (local.get $stepw) (i64.lt_s (local.get $stepw) (i64.const 0))))
            (local.set $j (local.get $k))
            (block $probed
              (loop $probes
                (br_if $probed (i32.eqz (local.get $j)))
                ;; Written always, kept only when in the piece: no branch on where a position lies.
                (local.set $rel (i64.sub (local.get $pos) (local.get $lo)))
                (i64.store (local.get $out) (i64.or (i64.shl (local.get $rel) (i64.const 16)) (i64.extend_i32_u (local.get $i))))
                (local.set $out (i32.add (local.get $out) (i32.shl (i64.lt_u (local.get $rel) (local.get $span)) (i32.const 3))))
                (local.set $x (i64.add (local.get $x) (local.get $b)))
                (local.set $p (i64.add (local.get $pos) (select (local.get $stepw) (local.get $step) (i64.lt_u (local.get $x) (local.get $b)))))
                (local.set $pos (select (i64.sub (local.get $p) (local.get $m)) (local.get $p) (i64.ge_u (local.get $p) (local.get $m))))
                (local.set $j (i32.sub (local.get $j) (i32.const 1)))
                (br $probes)))))
        (local.set $pairs (i32.add (local.get $pairs) (i32.const 16)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $items)))
    (i32.shr_u (i32.sub (local.get $out) (local.get $list)) (i32.const 3)))

  ;; A check's pass over one piece: for each of the `count` entries at `list`, the item's flag
  ;; gets 3 when its bit in the piece at `bitmap` is clear. No branch: the flag is ORed with 0 or 3.
  (func $checkList (param $list i32) (param $count i32) (param $flags i32) (param $bitmap i32)
    (local $end i32) (local $e i64) (local $rel i64) (local $at i32) (local $clear i32)
    (local.set $end (i32.add (local.get $list) (i32.shl (local.get $count) (i32.const 3))))
    (block $done
      (loop $entries
        (br_if $done (i32.ge_u (local.get $list) (local.get $end)))
        (local.set $e (i64.load (local.get $list)))
        (local.set $rel (i64.shr_u (local.get $e) (i64.const 16)))
        (local.set $clear (i32.xor (i32.and (i32.shr_u
          (i32.load8_u (i32.add (local.get $bitmap) (i32.wrap_i64 (i64.shr_u (local.get $rel) (i64.const 3)))))
          (i32.and (i32.wrap_i64 (local.get $rel)) (i32.const 7))) (i32.const 1)) (i32.const 1)))
        (local.set $at (i32.add (local.get $flags) (i32.and (i32.wrap_i64 (local.get $e)) (i32.const 0xffff))))
        (i32.store8 (local.get $at) (i32.or (i32.load8_u (local.get $at)) (i32.mul (local.get $clear) (i32.const 3))))
        (local.set $list (i32.add (local.get $list) (i32.const 8)))
        (br $entries))))

  ;; An add's pass over one piece: each entry's bit is set, and its item flagged 1 when that
  ;; turned it on. Entries in item order, so a repeated item finds the bits its first occurrence
  ;; set, in this piece as in every other. Returns the bits turned on.
  (func $addList (param $list i32) (param $count i32) (param $flags i32) (param $bitmap i32) (result i32)
    (local $end i32) (local $e i64) (local $rel i64) (local $at i32) (local $bit i32) (local $old i32) (local $clear i32) (local $bits i32)
    (local.set $end (i32.add (local.get $list) (i32.shl (local.get $count) (i32.const 3))))
    (block $done
      (loop $entries
        (br_if $done (i32.ge_u (local.get $list) (local.get $end)))
        (local.set $e (i64.load (local.get $list)))
        (local.set $rel (i64.shr_u (local.get $e) (i64.const 16)))
        (local.set $at (i32.add (local.get $bitmap) (i32.wrap_i64 (i64.shr_u (local.get $rel) (i64.const 3)))))
        (local.set $bit (i32.and (i32.wrap_i64 (local.get $rel)) (i32.const 7)))
        (local.set $old (i32.load8_u (local.get $at)))
        (i32.store8 (local.get $at) (i32.or (local.get $old) (i32.shl (i32.const 1) (local.get $bit))))
        (local.set $clear (i32.xor (i32.and (i32.shr_u (local.get $old) (local.get $bit)) (i32.const 1)) (i32.const 1)))
        (local.set $bits (i32.add (local.get $bits) (local.get $clear)))
        (local.set $at (i32.add (local.get $flags) (i32.and (i32.wrap_i64 (local.get $e)) (i32.const 0xffff))))
        (i32.store8 (local.get $at) (i32.or (i32.load8_u (local.get $at)) (local.get $clear)))
        (local.set $list (i32.add (local.get $list) (i32.const 8)))
        (br $entries)))
    (local.get $bits))

  ;; A check's pass over one piece: each item i < n whose flag is 0 gets flag 3 when one of its
  ;; positions in the piece is clear (an item flagged 2 or 3 is not looked at). After every piece,
  ;; 0 means present (filter-batch.ts). `list`: room for n * k + 1 entries.
  (func (export "checkPiece") (param $pairs i32) (param $flags i32) (param $n i32) (param $mBits f64) (param $k i32)
    (param $loBits f64) (param $spanBits f64) (param $list i32) (param $bitmap i32)
    (call $checkList (local.get $list)
      (call $listPiece (local.get $pairs) (local.get $flags) (local.get $n) (local.get $mBits) (local.get $k)
        (local.get $loBits) (local.get $spanBits) (i32.const 3) (local.get $list))
      (local.get $flags) (local.get $bitmap)))

  ;; An add's pass over one piece: each item i < n not flagged 2 (an older layer has it) has its
  ;; positions in the piece set, and is flagged 1 when that turned a bit on. Returns the bits
  ;; turned on. `list`: room for n * k + 1 entries.
  (func (export "addPiece") (param $pairs i32) (param $flags i32) (param $n i32) (param $mBits f64) (param $k i32)
    (param $loBits f64) (param $spanBits f64) (param $list i32) (param $bitmap i32) (result i32)
    (call $addList (local.get $list)
      (call $listPiece (local.get $pairs) (local.get $flags) (local.get $n) (local.get $mBits) (local.get $k)
        (local.get $loBits) (local.get $spanBits) (i32.const 2) (local.get $list))
      (local.get $flags) (local.get $bitmap)))

  ;; Before a check's passes: each item i < n whose flag is 0 and whose first position lies in
  ;; this piece gets flag 3 when that bit is clear. An absent item of a sparse layer nearly always
  ;; leaves there, for one cache miss, as $has's first position serves a layer in one memory; run
  ;; for every piece before any checkPiece, it keeps those items out of every list. No branch on
  ;; where the position lies: one outside the piece reads the list area's first byte instead.
  (func (export "checkFirst") (param $pairs i32) (param $flags i32) (param $n i32) (param $mBits f64)
    (param $loBits f64) (param $spanBits f64) (param $list i32) (param $bitmap i32)
    (local $i i32) (local $m i64) (local $lo i64) (local $span i64) (local $rel i64) (local $in i32) (local $at i32) (local $clear i32)
    (local.set $m (i64.trunc_f64_u (local.get $mBits)))
    (local.set $lo (i64.trunc_f64_u (local.get $loBits)))
    (local.set $span (i64.trunc_f64_u (local.get $spanBits)))
    (block $done
      (loop $items
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $rel (i64.sub (i64.rem_u (i64.load (local.get $pairs)) (local.get $m)) (local.get $lo)))
        (local.set $in (i64.lt_u (local.get $rel) (local.get $span)))
        (local.set $at (select (i32.add (local.get $bitmap) (i32.wrap_i64 (i64.shr_u (local.get $rel) (i64.const 3))))
          (local.get $list) (local.get $in)))
        (local.set $clear (i32.and (local.get $in) (i32.xor (i32.and (i32.shr_u (i32.load8_u (local.get $at))
          (i32.and (i32.wrap_i64 (local.get $rel)) (i32.const 7))) (i32.const 1)) (i32.const 1))))
        (local.set $at (i32.add (local.get $flags) (local.get $i)))
        ;; Flag 0 becomes 3 when clear; 2 or 3 stay (2 | 3 would be 3: only a flag 0 is ORed).
        (i32.store8 (local.get $at) (i32.or (i32.load8_u (local.get $at))
          (i32.mul (i32.mul (local.get $clear) (i32.const 3)) (i32.eqz (i32.load8_u (local.get $at))))))
        (local.set $pairs (i32.add (local.get $pairs) (i32.const 16)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $items))))
)
