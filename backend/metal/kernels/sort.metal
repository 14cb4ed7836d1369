// sort.metal: Sort, ArgSort and TopK along one axis (see sort.go). Host
// names: sort_block_<kind>_<dtype> (a bitonic sort of a block in
// threadgroup memory) and sort_merge_<kind>_<dtype> (one merge pass of
// sorted runs), where kind is sort, argsort or topk (writing the result)
// or sortscratch or topkscratch (writing (key, index) runs to scratch).
// Buffers: sort_block: [[buffer(0)]] in, [[buffer(1)]] values or keys,
// [[buffer(2)]] indices, [[buffer(3)]] SortParams; sort_merge: [[buffer(0)]]
// keys, [[buffer(1)]] indices (scratch runs), [[buffer(2)]] values or keys,
// [[buffer(3)]] indices, [[buffer(4)]] SortParams.

// ------------------------------------------------------------ helpers
// ld and st move values between a storage type and the type a kernel
// computes in (through Elem, so 16-bit floats widen to float and round
// once on store; bool is 0 or 1 and stores "not zero").
template <typename A, typename S> inline A ld(S x) { return A(Elem<S>::load(x)); }
template <typename S, typename A> inline S st(A a) { return Elem<S>::store(typename Elem<S>::compute(a)); }

// Views in kernel parameters have up to MAXD dims after merging.
#define MAXD 8

// offset_of returns the element offset of row-major index i in a view of
// shape[0..nd) with strides st (64-bit: offsets may pass 2^32).
inline long offset_of(long i, long nd, constant long* shape, constant long* st) {
  long off = 0;
  for (long d = nd - 1; d >= 0; d--) {
    off += (i % shape[d]) * st[d];
    i /= shape[d];
  }
  return off;
}

// Sorting orders (key, index) pairs, so the sort is stable (ArgSort) and
// every thread schedule gives the same answer. Ascending puts NaN last and
// descending (TopK) first, as numpy's sort and its reverse. Padding past
// a line's end has index PAD and sorts after everything.
#define PAD 0xffffffffu

template <typename K, bool Desc> inline bool sort_before(K a, uint i, K b, uint j) {
  if (i == PAD || j == PAD) return i < j;
  bool an = a != a, bn = b != b;
  bool lt = Desc ? (a > b || (an && !bn)) : (a < b || (!an && bn));
  bool gt = Desc ? (b > a || (bn && !an)) : (b < a || (!bn && an));
  return lt || (!gt && i < j);
}

// Where a sort kernel writes: the sorted values or their indices along
// the output line (the first k only), or (key, index) pairs to scratch
// lines of n for the merge passes.
#define SORT_VALUES 0
#define SORT_INDICES 1
#define SORT_SCRATCH 2

// SortParams: outs lines of n elements, in_step apart in the input along
// the axis and out_step apart in the output, of which the first k are
// written; width is the length of the sorted runs (block kernel: the
// block size) and the kept dims place each line.
struct SortParams {
  long n, outs, k, width, in_step, out_step, in_off, out_off, nk;
  long kshape[MAXD], kin[MAXD], kout[MAXD];
};

// SORT_BLOCK is the largest run sort_block sorts in threadgroup memory:
// 2048 pairs of an 8-byte key and an index take 24 KiB.
#define SORT_BLOCK 2048

// sort_store writes the element at sorted position q of line o.
template <typename In, typename K, int Mode>
inline void sort_store(device uchar* ov, device uint* oi, constant SortParams& p, long o, long q, K key, uint idx) {
  if (Mode == SORT_SCRATCH) {
    ((device K*)ov)[o * p.n + q] = key;
    oi[o * p.n + q] = idx;
  } else if (q < p.k) {
    long off = p.out_off + offset_of(o, p.nk, p.kshape, p.kout) + q * p.out_step;
    if (Mode == SORT_VALUES) {
      elem_write((device In*)ov + off, st<In>(key));
    } else {
      oi[off] = idx;
    }
  }
}

// sort_block sorts block tg.x (width elements) of line tg.y with a
// bitonic network in threadgroup memory, its threads sharing the width/2
// compare-exchanges of each step.
// The plans launch at most SORT_THREADS threads per threadgroup (sortThreads
// in sort.go); tg and the group size are both uint2, as Metal requires of
// position and size attributes.
#define SORT_THREADS 512

template <typename In, typename K, bool Desc, int Mode>
[[kernel, max_total_threads_per_threadgroup(SORT_THREADS)]] void sort_block(
    device const In* in [[buffer(0)]], device uchar* ov [[buffer(1)]], device uint* oi [[buffer(2)]],
    constant SortParams& p [[buffer(3)]], uint2 tg [[threadgroup_position_in_grid]],
    uint t [[thread_index_in_threadgroup]], uint2 tgsize [[threads_per_threadgroup]]) {
  threadgroup K keys[SORT_BLOCK];
  threadgroup uint idx[SORT_BLOCK];
  uint tpg = tgsize.x;
  long o = tg.y;
  uint B = uint(p.width);
  long start = long(tg.x) * B;
  device const In* x = in + p.in_off + offset_of(o, p.nk, p.kshape, p.kin);
  for (uint q = t; q < B; q += tpg) {
    long g = start + q;
    keys[q] = g < p.n ? ld<K>(elem_read(x + g * p.in_step)) : K(0);
    idx[q] = g < p.n ? uint(g) : PAD;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint k = 2; k <= B; k <<= 1) {
    for (uint j = k >> 1; j > 0; j >>= 1) {
      for (uint s = t; s < B / 2; s += tpg) {
        uint i = 2 * s - (s & (j - 1));
        uint l = i + j;
        bool up = (i & k) == 0;
        K ki = keys[i], kl = keys[l];
        uint ii = idx[i], il = idx[l];
        if (sort_before<K, Desc>(kl, il, ki, ii) == up) {
          keys[i] = kl;
          keys[l] = ki;
          idx[i] = il;
          idx[l] = ii;
        }
      }
      threadgroup_barrier(mem_flags::mem_threadgroup);
    }
  }
  for (uint q = t; q < B; q += tpg) {
    if (start + q < p.n) sort_store<In, K, Mode>(ov, oi, p, o, start + q, keys[q], idx[q]);
  }
}

// sort_merge merges neighbouring sorted runs of width elements of the
// scratch lines into runs of twice that: each thread places one element,
// at its rank in its own run plus its rank in the other run (a binary
// search; pairs are distinct, so the ranks never collide).
template <typename In, typename K, bool Desc, int Mode>
kernel void sort_merge(device const K* keys [[buffer(0)]], device const uint* idx [[buffer(1)]],
                       device uchar* ov [[buffer(2)]], device uint* oi [[buffer(3)]],
                       constant SortParams& p [[buffer(4)]], uint2 gid [[thread_position_in_grid]]) {
  long i = gid.x, o = gid.y;
  if (i >= p.n) return;
  device const K* kl = keys + o * p.n;
  device const uint* il = idx + o * p.n;
  long run = i / p.width;
  long mine = run * p.width;
  long other = (run ^ 1) * p.width;
  long lo = other, hi = min64(p.n, other + p.width);
  K key = kl[i];
  uint ix = il[i];
  // Count the other run's elements that come before this one (none when
  // the last run has no partner).
  while (lo < hi) {
    long mid = (lo + hi) / 2;
    if (sort_before<K, Desc>(kl[mid], il[mid], key, ix)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  long merged = min64(mine, other);
  long rank = (i - mine) + (lo - other);
  sort_store<In, K, Mode>(ov, oi, p, o, merged + rank, key, ix);
}

instantiate_kernel("sort_block_sort_float32", sort_block, float, float, false, SORT_VALUES)
instantiate_kernel("sort_block_sort_float16", sort_block, half, float, false, SORT_VALUES)
instantiate_kernel("sort_block_sort_bfloat16", sort_block, bf16_t, float, false, SORT_VALUES)
instantiate_kernel("sort_block_sort_int32", sort_block, int, int, false, SORT_VALUES)
instantiate_kernel("sort_block_sort_int64", sort_block, long, long, false, SORT_VALUES)
instantiate_kernel("sort_block_sort_uint8", sort_block, uchar, uchar, false, SORT_VALUES)
instantiate_kernel("sort_block_sort_bool", sort_block, bool, uchar, false, SORT_VALUES)
instantiate_kernel("sort_block_argsort_float32", sort_block, float, float, false, SORT_INDICES)
instantiate_kernel("sort_block_argsort_float16", sort_block, half, float, false, SORT_INDICES)
instantiate_kernel("sort_block_argsort_bfloat16", sort_block, bf16_t, float, false, SORT_INDICES)
instantiate_kernel("sort_block_argsort_int32", sort_block, int, int, false, SORT_INDICES)
instantiate_kernel("sort_block_argsort_int64", sort_block, long, long, false, SORT_INDICES)
instantiate_kernel("sort_block_argsort_uint8", sort_block, uchar, uchar, false, SORT_INDICES)
instantiate_kernel("sort_block_argsort_bool", sort_block, bool, uchar, false, SORT_INDICES)
instantiate_kernel("sort_block_topk_float32", sort_block, float, float, true, SORT_VALUES)
instantiate_kernel("sort_block_topk_float16", sort_block, half, float, true, SORT_VALUES)
instantiate_kernel("sort_block_topk_bfloat16", sort_block, bf16_t, float, true, SORT_VALUES)
instantiate_kernel("sort_block_topk_int32", sort_block, int, int, true, SORT_VALUES)
instantiate_kernel("sort_block_topk_int64", sort_block, long, long, true, SORT_VALUES)
instantiate_kernel("sort_block_topk_uint8", sort_block, uchar, uchar, true, SORT_VALUES)
instantiate_kernel("sort_block_topk_bool", sort_block, bool, uchar, true, SORT_VALUES)
instantiate_kernel("sort_block_sortscratch_float32", sort_block, float, float, false, SORT_SCRATCH)
instantiate_kernel("sort_block_sortscratch_float16", sort_block, half, float, false, SORT_SCRATCH)
instantiate_kernel("sort_block_sortscratch_bfloat16", sort_block, bf16_t, float, false, SORT_SCRATCH)
instantiate_kernel("sort_block_sortscratch_int32", sort_block, int, int, false, SORT_SCRATCH)
instantiate_kernel("sort_block_sortscratch_int64", sort_block, long, long, false, SORT_SCRATCH)
instantiate_kernel("sort_block_sortscratch_uint8", sort_block, uchar, uchar, false, SORT_SCRATCH)
instantiate_kernel("sort_block_sortscratch_bool", sort_block, bool, uchar, false, SORT_SCRATCH)
instantiate_kernel("sort_block_topkscratch_float32", sort_block, float, float, true, SORT_SCRATCH)
instantiate_kernel("sort_block_topkscratch_float16", sort_block, half, float, true, SORT_SCRATCH)
instantiate_kernel("sort_block_topkscratch_bfloat16", sort_block, bf16_t, float, true, SORT_SCRATCH)
instantiate_kernel("sort_block_topkscratch_int32", sort_block, int, int, true, SORT_SCRATCH)
instantiate_kernel("sort_block_topkscratch_int64", sort_block, long, long, true, SORT_SCRATCH)
instantiate_kernel("sort_block_topkscratch_uint8", sort_block, uchar, uchar, true, SORT_SCRATCH)
instantiate_kernel("sort_block_topkscratch_bool", sort_block, bool, uchar, true, SORT_SCRATCH)
instantiate_kernel("sort_merge_sort_float32", sort_merge, float, float, false, SORT_VALUES)
instantiate_kernel("sort_merge_sort_float16", sort_merge, half, float, false, SORT_VALUES)
instantiate_kernel("sort_merge_sort_bfloat16", sort_merge, bf16_t, float, false, SORT_VALUES)
instantiate_kernel("sort_merge_sort_int32", sort_merge, int, int, false, SORT_VALUES)
instantiate_kernel("sort_merge_sort_int64", sort_merge, long, long, false, SORT_VALUES)
instantiate_kernel("sort_merge_sort_uint8", sort_merge, uchar, uchar, false, SORT_VALUES)
instantiate_kernel("sort_merge_sort_bool", sort_merge, bool, uchar, false, SORT_VALUES)
instantiate_kernel("sort_merge_argsort_float32", sort_merge, float, float, false, SORT_INDICES)
instantiate_kernel("sort_merge_argsort_float16", sort_merge, half, float, false, SORT_INDICES)
instantiate_kernel("sort_merge_argsort_bfloat16", sort_merge, bf16_t, float, false, SORT_INDICES)
instantiate_kernel("sort_merge_argsort_int32", sort_merge, int, int, false, SORT_INDICES)
instantiate_kernel("sort_merge_argsort_int64", sort_merge, long, long, false, SORT_INDICES)
instantiate_kernel("sort_merge_argsort_uint8", sort_merge, uchar, uchar, false, SORT_INDICES)
instantiate_kernel("sort_merge_argsort_bool", sort_merge, bool, uchar, false, SORT_INDICES)
instantiate_kernel("sort_merge_topk_float32", sort_merge, float, float, true, SORT_VALUES)
instantiate_kernel("sort_merge_topk_float16", sort_merge, half, float, true, SORT_VALUES)
instantiate_kernel("sort_merge_topk_bfloat16", sort_merge, bf16_t, float, true, SORT_VALUES)
instantiate_kernel("sort_merge_topk_int32", sort_merge, int, int, true, SORT_VALUES)
instantiate_kernel("sort_merge_topk_int64", sort_merge, long, long, true, SORT_VALUES)
instantiate_kernel("sort_merge_topk_uint8", sort_merge, uchar, uchar, true, SORT_VALUES)
instantiate_kernel("sort_merge_topk_bool", sort_merge, bool, uchar, true, SORT_VALUES)
instantiate_kernel("sort_merge_sortscratch_float32", sort_merge, float, float, false, SORT_SCRATCH)
instantiate_kernel("sort_merge_sortscratch_float16", sort_merge, half, float, false, SORT_SCRATCH)
instantiate_kernel("sort_merge_sortscratch_bfloat16", sort_merge, bf16_t, float, false, SORT_SCRATCH)
instantiate_kernel("sort_merge_sortscratch_int32", sort_merge, int, int, false, SORT_SCRATCH)
instantiate_kernel("sort_merge_sortscratch_int64", sort_merge, long, long, false, SORT_SCRATCH)
instantiate_kernel("sort_merge_sortscratch_uint8", sort_merge, uchar, uchar, false, SORT_SCRATCH)
instantiate_kernel("sort_merge_sortscratch_bool", sort_merge, bool, uchar, false, SORT_SCRATCH)
instantiate_kernel("sort_merge_topkscratch_float32", sort_merge, float, float, true, SORT_SCRATCH)
instantiate_kernel("sort_merge_topkscratch_float16", sort_merge, half, float, true, SORT_SCRATCH)
instantiate_kernel("sort_merge_topkscratch_bfloat16", sort_merge, bf16_t, float, true, SORT_SCRATCH)
instantiate_kernel("sort_merge_topkscratch_int32", sort_merge, int, int, true, SORT_SCRATCH)
instantiate_kernel("sort_merge_topkscratch_int64", sort_merge, long, long, true, SORT_SCRATCH)
instantiate_kernel("sort_merge_topkscratch_uint8", sort_merge, uchar, uchar, true, SORT_SCRATCH)
instantiate_kernel("sort_merge_topkscratch_bool", sort_merge, bool, uchar, true, SORT_SCRATCH)
instantiate_kernel("sort_block_sort_int8", sort_block, char, int, false, SORT_VALUES)
instantiate_kernel("sort_block_sort_int16", sort_block, short, int, false, SORT_VALUES)
instantiate_kernel("sort_block_sort_uint16", sort_block, u16_t, uint, false, SORT_VALUES)
instantiate_kernel("sort_block_sort_uint32", sort_block, uint, uint, false, SORT_VALUES)
instantiate_kernel("sort_block_sort_uint64", sort_block, ulong, ulong, false, SORT_VALUES)
instantiate_kernel("sort_block_argsort_int8", sort_block, char, int, false, SORT_INDICES)
instantiate_kernel("sort_block_argsort_int16", sort_block, short, int, false, SORT_INDICES)
instantiate_kernel("sort_block_argsort_uint16", sort_block, u16_t, uint, false, SORT_INDICES)
instantiate_kernel("sort_block_argsort_uint32", sort_block, uint, uint, false, SORT_INDICES)
instantiate_kernel("sort_block_argsort_uint64", sort_block, ulong, ulong, false, SORT_INDICES)
instantiate_kernel("sort_block_topk_int8", sort_block, char, int, true, SORT_VALUES)
instantiate_kernel("sort_block_topk_int16", sort_block, short, int, true, SORT_VALUES)
instantiate_kernel("sort_block_topk_uint16", sort_block, u16_t, uint, true, SORT_VALUES)
instantiate_kernel("sort_block_topk_uint32", sort_block, uint, uint, true, SORT_VALUES)
instantiate_kernel("sort_block_topk_uint64", sort_block, ulong, ulong, true, SORT_VALUES)
instantiate_kernel("sort_block_sortscratch_int8", sort_block, char, int, false, SORT_SCRATCH)
instantiate_kernel("sort_block_sortscratch_int16", sort_block, short, int, false, SORT_SCRATCH)
instantiate_kernel("sort_block_sortscratch_uint16", sort_block, u16_t, uint, false, SORT_SCRATCH)
instantiate_kernel("sort_block_sortscratch_uint32", sort_block, uint, uint, false, SORT_SCRATCH)
instantiate_kernel("sort_block_sortscratch_uint64", sort_block, ulong, ulong, false, SORT_SCRATCH)
instantiate_kernel("sort_block_topkscratch_int8", sort_block, char, int, true, SORT_SCRATCH)
instantiate_kernel("sort_block_topkscratch_int16", sort_block, short, int, true, SORT_SCRATCH)
instantiate_kernel("sort_block_topkscratch_uint16", sort_block, u16_t, uint, true, SORT_SCRATCH)
instantiate_kernel("sort_block_topkscratch_uint32", sort_block, uint, uint, true, SORT_SCRATCH)
instantiate_kernel("sort_block_topkscratch_uint64", sort_block, ulong, ulong, true, SORT_SCRATCH)
instantiate_kernel("sort_merge_sort_int8", sort_merge, char, int, false, SORT_VALUES)
instantiate_kernel("sort_merge_sort_int16", sort_merge, short, int, false, SORT_VALUES)
instantiate_kernel("sort_merge_sort_uint16", sort_merge, u16_t, uint, false, SORT_VALUES)
instantiate_kernel("sort_merge_sort_uint32", sort_merge, uint, uint, false, SORT_VALUES)
instantiate_kernel("sort_merge_sort_uint64", sort_merge, ulong, ulong, false, SORT_VALUES)
instantiate_kernel("sort_merge_argsort_int8", sort_merge, char, int, false, SORT_INDICES)
instantiate_kernel("sort_merge_argsort_int16", sort_merge, short, int, false, SORT_INDICES)
instantiate_kernel("sort_merge_argsort_uint16", sort_merge, u16_t, uint, false, SORT_INDICES)
instantiate_kernel("sort_merge_argsort_uint32", sort_merge, uint, uint, false, SORT_INDICES)
instantiate_kernel("sort_merge_argsort_uint64", sort_merge, ulong, ulong, false, SORT_INDICES)
instantiate_kernel("sort_merge_topk_int8", sort_merge, char, int, true, SORT_VALUES)
instantiate_kernel("sort_merge_topk_int16", sort_merge, short, int, true, SORT_VALUES)
instantiate_kernel("sort_merge_topk_uint16", sort_merge, u16_t, uint, true, SORT_VALUES)
instantiate_kernel("sort_merge_topk_uint32", sort_merge, uint, uint, true, SORT_VALUES)
instantiate_kernel("sort_merge_topk_uint64", sort_merge, ulong, ulong, true, SORT_VALUES)
instantiate_kernel("sort_merge_sortscratch_int8", sort_merge, char, int, false, SORT_SCRATCH)
instantiate_kernel("sort_merge_sortscratch_int16", sort_merge, short, int, false, SORT_SCRATCH)
instantiate_kernel("sort_merge_sortscratch_uint16", sort_merge, u16_t, uint, false, SORT_SCRATCH)
instantiate_kernel("sort_merge_sortscratch_uint32", sort_merge, uint, uint, false, SORT_SCRATCH)
instantiate_kernel("sort_merge_sortscratch_uint64", sort_merge, ulong, ulong, false, SORT_SCRATCH)
instantiate_kernel("sort_merge_topkscratch_int8", sort_merge, char, int, true, SORT_SCRATCH)
instantiate_kernel("sort_merge_topkscratch_int16", sort_merge, short, int, true, SORT_SCRATCH)
instantiate_kernel("sort_merge_topkscratch_uint16", sort_merge, u16_t, uint, true, SORT_SCRATCH)
instantiate_kernel("sort_merge_topkscratch_uint32", sort_merge, uint, uint, true, SORT_SCRATCH)
instantiate_kernel("sort_merge_topkscratch_uint64", sort_merge, ulong, ulong, true, SORT_SCRATCH)
