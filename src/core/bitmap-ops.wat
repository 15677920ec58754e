;; The bitmap operations other than the Bloom kernel's, over bitmaps of one arena (arena.ts):
;; BF.MERGE's OR, fill counting (set bits of a range) and the window filters' per-item probes and
;; sets (window-filter.ts, window-slice.ts). `npm run build:wasm` turns this file into
;; bitmap-ops-module.ts; bitmap-ops.ts calls it.
;;
;; The memory is the arena's, imported and shared (a SharedArrayBuffer on the JavaScript side), and
;; never grows (the module has no memory.grow). Lengths are counted down rather than compared with
;; an end address: a bitmap may end exactly at 4 GiB, where an i32 end address would wrap to 0.
(module
  (import "env" "memory" (memory 1 65536 shared))
  ;; The same arena's Bloom kernel's hashItems (bloom-kernel.wat): RedisBloom's pair of each item.
  (import "bloom" "hashItems" (func $hashItems (param i32 i32 i32)))

  ;; memory[dst, dst + len) |= memory[src, src + len): 16 bytes at a time, then byte by byte.
  (func (export "orInto") (param $dst i32) (param $src i32) (param $len i32)
    (block $wide
      (loop $vectors
        (br_if $wide (i32.lt_u (local.get $len) (i32.const 16)))
        (v128.store (local.get $dst) (v128.or (v128.load (local.get $dst)) (v128.load (local.get $src))))
        (local.set $dst (i32.add (local.get $dst) (i32.const 16)))
        (local.set $src (i32.add (local.get $src) (i32.const 16)))
        (local.set $len (i32.sub (local.get $len) (i32.const 16)))
        (br $vectors)))
    (block $done
      (loop $bytes
        (br_if $done (i32.eqz (local.get $len)))
        (i32.store8 (local.get $dst) (i32.or (i32.load8_u (local.get $dst)) (i32.load8_u (local.get $src))))
        (local.set $dst (i32.add (local.get $dst) (i32.const 1)))
        (local.set $src (i32.add (local.get $src) (i32.const 1)))
        (local.set $len (i32.sub (local.get $len) (i32.const 1)))
        (br $bytes))))

  ;; Set bits of memory[p, p + len): 8 bytes at a time (i64.popcnt), then byte by byte. A double:
  ;; up to 2^35, exact, and no BigInt on the JavaScript side.
  (func (export "countBits") (param $p i32) (param $len i32) (result f64)
    (local $count i64)
    (block $wide
      (loop $words
        (br_if $wide (i32.lt_u (local.get $len) (i32.const 8)))
        (local.set $count (i64.add (local.get $count) (i64.popcnt (i64.load (local.get $p)))))
        (local.set $p (i32.add (local.get $p) (i32.const 8)))
        (local.set $len (i32.sub (local.get $len) (i32.const 8)))
        (br $words)))
    (block $done
      (loop $bytes
        (br_if $done (i32.eqz (local.get $len)))
        (local.set $count (i64.add (local.get $count) (i64.extend_i32_u (i32.popcnt (i32.load8_u (local.get $p))))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (local.set $len (i32.sub (local.get $len) (i32.const 1)))
        (br $bytes)))
    (f64.convert_i64_u (local.get $count)))

  ;; The window filters' slice table, 16 bytes per slice, newest first: u64 bit count m, u32 bitmap
  ;; offset, u32 hash index i. The slice's position of the item whose pair (u64 a, u64 b) is at
  ;; `pair` is (a + i·b) mod 2^64 mod m (window-slice.ts). For slices of the first slice's size (all
  ;; of a COUNT filter's, most of a TIME filter's) the k positions are worked out once per item by
  ;; $positions into the k u64 after the pair; other slices take one $mod each.
  (global $m0 (mut i64) (i64.const 0))

  (func $position (param $pair i32) (param $slice i32) (result i64)
    (local $m i64) (local $i i32)
    (local.set $m (i64.load (local.get $slice)))
    (local.set $i (i32.load offset=12 (local.get $slice)))
    (if (i64.eq (local.get $m) (global.get $m0))
      (then (return (i64.load offset=16 (i32.add (local.get $pair) (i32.shl (local.get $i) (i32.const 3)))))))
    (call $mod
      (i64.add (i64.load (local.get $pair)) (i64.mul (i64.extend_i32_u (local.get $i)) (i64.load offset=8 (local.get $pair))))
      (local.get $m)))

  ;; The k positions (a + i·b) mod 2^64 mod m0, i < k, for m0 the first slice's size, at pair + 16:
  ;; three divisions, then steps `pos += b mod m0`, less 2^64 mod m0 when a + i·b wraps (as the
  ;; Bloom kernel's $next).
  (func $positions (param $pair i32) (param $table i32) (param $k i32)
    (local $m i64) (local $x i64) (local $b i64) (local $pos i64) (local $step i64) (local $wrap i64) (local $at i32)
    (local.set $m (i64.load (local.get $table)))
    (global.set $m0 (local.get $m))
    (local.set $x (i64.load (local.get $pair)))
    (local.set $b (i64.load offset=8 (local.get $pair)))
    (local.set $pos (call $mod (local.get $x) (local.get $m)))
    (local.set $step (call $mod (local.get $b) (local.get $m)))
    (local.set $wrap (call $mod (i64.add (call $mod (i64.const -1) (local.get $m)) (i64.const 1)) (local.get $m)))
    (local.set $at (i32.add (local.get $pair) (i32.const 16)))
    (block $done
      (loop $steps
        (br_if $done (i32.eqz (local.get $k)))
        (i64.store (local.get $at) (local.get $pos))
        (local.set $x (i64.add (local.get $x) (local.get $b)))
        (local.set $pos (i64.add (local.get $pos) (local.get $step)))
        (local.set $pos (select (i64.sub (local.get $pos) (local.get $m)) (local.get $pos) (i64.ge_u (local.get $pos) (local.get $m))))
        (local.set $pos (i64.sub (local.get $pos) (select (local.get $wrap) (i64.const 0) (i64.lt_u (local.get $x) (local.get $b)))))
        (local.set $pos (select (i64.add (local.get $pos) (local.get $m)) (local.get $pos) (i64.lt_s (local.get $pos) (i64.const 0))))
        (local.set $at (i32.add (local.get $at) (i32.const 8)))
        (local.set $k (i32.sub (local.get $k) (i32.const 1)))
        (br $steps))))

  ;; x mod m, exact, for any u64 x and m in [1, 2^53): for m of 2^12 or more by one floating-point
  ;; division (a 64-bit integer division costs several times as much), as hashing.ts `mod64`:
  ;; the double nearest x is off by at most 2^11 and the rounded quotient by at most one more, so
  ;; q = trunc(x / m) is the true quotient or one off either way; x - q·m, taken in wrapping
  ;; 64-bit arithmetic, is then in [-m, 2m), brought into [0, m) by one correction. Smaller m: rem_u.
  (func $mod (param $x i64) (param $m i64) (result i64)
    (local $r i64)
    (if (i64.lt_u (local.get $m) (i64.const 4096)) (then (return (i64.rem_u (local.get $x) (local.get $m)))))
    (local.set $r (i64.sub (local.get $x)
      (i64.mul (local.get $m)
        (i64.trunc_f64_u (f64.floor (f64.div (f64.convert_i64_u (local.get $x)) (f64.convert_i64_u (local.get $m))))))))
    (if (i64.lt_s (local.get $r) (i64.const 0)) (then (return (i64.add (local.get $r) (local.get $m)))))
    (select (i64.sub (local.get $r) (local.get $m)) (local.get $r) (i64.ge_u (local.get $r) (local.get $m))))

  ;; Whether slice p of the table holds the item's bit.
  (func $test (param $pair i32) (param $table i32) (param $p i32) (result i32)
    (local $slice i32) (local $pos i64)
    (local.set $slice (i32.add (local.get $table) (i32.shl (local.get $p) (i32.const 4))))
    (local.set $pos (call $position (local.get $pair) (local.get $slice)))
    (i32.and
      (i32.shr_u
        (i32.load8_u (i32.add (i32.load offset=8 (local.get $slice)) (i32.wrap_i64 (i64.shr_u (local.get $pos) (i64.const 3)))))
        (i32.and (i32.wrap_i64 (local.get $pos)) (i32.const 7)))
      (i32.const 1)))

  ;; window-filter.ts `findRun`: whether some k consecutive slices among the first `live` hold the
  ;; item. Probes one slice in k (anchors k-1, 2k-1, ...) and extends a run only from a set bit.
  (func $findRun (param $pair i32) (param $table i32) (param $k i32) (param $live i32) (result i32)
    (local $anchor i32) (local $run i32) (local $p i32)
    (local.set $anchor (i32.sub (local.get $k) (i32.const 1)))
    (block $none
      (loop $anchors
        (br_if $none (i32.ge_u (local.get $anchor) (local.get $live)))
        (if (call $test (local.get $pair) (local.get $table) (local.get $anchor))
          (then
            (local.set $run (i32.const 1))
            (local.set $p (i32.sub (local.get $anchor) (i32.const 1)))
            (block $older
              (loop $back
                (br_if $older (i32.le_s (local.get $p) (i32.sub (local.get $anchor) (local.get $k))))
                (br_if $older (i32.eqz (call $test (local.get $pair) (local.get $table) (local.get $p))))
                (local.set $run (i32.add (local.get $run) (i32.const 1)))
                (local.set $p (i32.sub (local.get $p) (i32.const 1)))
                (br $back)))
            (local.set $p (i32.add (local.get $anchor) (i32.const 1)))
            (block $newer
              (loop $forward
                (br_if $newer (i32.ge_u (local.get $run) (local.get $k)))
                (br_if $newer (i32.ge_u (local.get $p) (local.get $live)))
                (br_if $newer (i32.eqz (call $test (local.get $pair) (local.get $table) (local.get $p))))
                (local.set $run (i32.add (local.get $run) (i32.const 1)))
                (local.set $p (i32.add (local.get $p) (i32.const 1)))
                (br $forward)))
            (if (i32.ge_u (local.get $run) (local.get $k)) (then (return (i32.const 1))))))
        (local.set $anchor (i32.add (local.get $anchor) (local.get $k)))
        (br $anchors)))
    (i32.const 0))

  ;; A window filter's check (APBF.EXISTS): the item described at `desc` (u32 offset, u32 length)
  ;; hashed into `pair` (its k positions after it: 16 + 8 k bytes in all), then findRun over the
  ;; first `live` slices.
  (func (export "windowHas") (param $desc i32) (param $pair i32) (param $table i32) (param $k i32) (param $live i32) (result i32)
    (call $hashItems (local.get $desc) (i32.const 1) (local.get $pair))
    (call $positions (local.get $pair) (local.get $table) (local.get $k))
    (call $findRun (local.get $pair) (local.get $table) (local.get $k) (local.get $live)))

  ;; A window filter's add (APBF.ADD) after its shift: the item hashed as in windowHas, findRun over
  ;; the first `live` slices, then the item's bit set in each of the k newest. Returns bit 0: it was there (findRun), bit 1: some bit
  ;; was clear before (window-slice.ts `set` returned true for one of them).
  (func (export "windowAdd") (param $desc i32) (param $pair i32) (param $table i32) (param $k i32) (param $live i32) (result i32)
    (local $seen i32) (local $changed i32) (local $p i32) (local $slice i32) (local $pos i64)
    (local $at i32) (local $mask i32) (local $old i32)
    (call $hashItems (local.get $desc) (i32.const 1) (local.get $pair))
    (call $positions (local.get $pair) (local.get $table) (local.get $k))
    (local.set $seen (call $findRun (local.get $pair) (local.get $table) (local.get $k) (local.get $live)))
    (block $done
      (loop $slices
        (br_if $done (i32.ge_u (local.get $p) (local.get $k)))
        (local.set $slice (i32.add (local.get $table) (i32.shl (local.get $p) (i32.const 4))))
        (local.set $pos (call $position (local.get $pair) (local.get $slice)))
        (local.set $at (i32.add (i32.load offset=8 (local.get $slice)) (i32.wrap_i64 (i64.shr_u (local.get $pos) (i64.const 3)))))
        (local.set $mask (i32.shl (i32.const 1) (i32.and (i32.wrap_i64 (local.get $pos)) (i32.const 7))))
        (local.set $old (i32.load8_u (local.get $at)))
        (if (i32.eqz (i32.and (local.get $old) (local.get $mask)))
          (then
            (i32.store8 (local.get $at) (i32.or (local.get $old) (local.get $mask)))
            (local.set $changed (i32.const 2))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $slices)))
    (i32.or (local.get $seen) (local.get $changed)))
)
