// gather.metal: Take and TakeAlongAxis (gather_<bits>_<index dtype>),
// PutAlongAxis (scatter_claim_<index dtype>, then
// scatter_put_<bits>_<index dtype>) and ScatterAddAlongAxis
// (scatter_add_<dtype>_<index dtype>); and MLX's Gather and Scatter
// (index_offsets_<index dtype>, then gather_slices_<bits> or the
// scatter_slices_* kernels; see the section below). See gather.go. bits
// is the element size (8, 16, 32, 64): gathers move elements as words.
// Index dtypes are every integer dtype.
// Buffers: gather: out, src, idx, err, GatherParams; scatter_claim: idx,
// own, err, ScatterParams; scatter_put: out, idx, values, own,
// ScatterParams; scatter_add: acc (out or scratch), idx, updates, err,
// ScatterParams.

// ------------------------------------------------------------ helpers
// ld and st move values between a storage type and the type a kernel
// computes in (through Elem, so 16-bit floats widen to float and round
// once on store; bool is 0 or 1 and stores "not zero").
template <typename A, typename S> inline A ld(S x) { return A(Elem<S>::load(x)); }
template <typename S, typename A> inline S st(A a) { return Elem<S>::store(typename Elem<S>::compute(a)); }

// ldd and std_ read and write an element in device memory, in the compute
// type. uint16 moves as the ushort it is stored as: a struct u16_t in
// device memory does not bind to a by-value parameter of the thread
// address space, and this reads the same bits whatever u16_t's definition.
template <typename S>
inline typename Elem<S>::compute ldd(device const S* p) {
  return Elem<S>::load(*p);
}
template <>
inline ushort ldd(device const u16_t* p) {
  return *(device const ushort*)p;
}
template <typename S>
inline void std_(device S* p, typename Elem<S>::compute v) {
  *p = Elem<S>::store(v);
}
template <>
inline void std_(device u16_t* p, ushort v) {
  *(device ushort*)p = v;
}

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

// Gathers and scatters move elements without looking at them, so they are
// instantiated per element size (word) rather than per dtype.
//
// An index out of range is reported through the error buffer err: the
// first thread to find one sets err[0] to 1 and stores the index in
// err[1] (low 32 bits) and err[2] (high), then the kernel goes on. The
// plan's caller reads the buffer after the run (see IndexCheck).
inline bool wrap_index(long v, long n, thread long& j) {
  j = v < 0 ? v + n : v;
  return j >= 0 && j < n;
}

inline void report_index(device atomic_uint* err, long v) {
  if (atomic_exchange_explicit(&err[0], 1u, memory_order_relaxed) == 0u) {
    atomic_store_explicit(&err[1], uint(ulong(v) & 0xffffffffu), memory_order_relaxed);
    atomic_store_explicit(&err[2], uint(ulong(v) >> 32), memory_order_relaxed);
  }
}

// GatherParams: out[e] = src[src(e) + wrap(idx[idx(e)]) * step] over
// out's shape (total elements, nd dims), where src and idx are views of
// out's shape with their own strides and n is the size of the gathered
// axis.
struct GatherParams {
  long total, nd, n, step, out_off, idx_off, src_off;
  long shape[MAXD], so[MAXD], si[MAXD], ss[MAXD];
};

template <typename W, typename I>
kernel void gather(device W* out [[buffer(0)]], device const W* src [[buffer(1)]],
                   device const I* idx [[buffer(2)]], device atomic_uint* err [[buffer(3)]],
                   constant GatherParams& p [[buffer(4)]],
                   uint gid [[thread_position_in_grid]], uint nthreads [[threads_per_grid]]) {
  for (long e = gid; e < p.total; e += nthreads) {
    long a = p.out_off, b = p.idx_off, c = p.src_off, i = e;
    for (long d = p.nd - 1; d >= 0; d--) {
      long s = p.shape[d], x = i % s;
      i /= s;
      a += x * p.so[d];
      b += x * p.si[d];
      c += x * p.ss[d];
    }
    long v = long(ldd(idx + b)), j;
    if (!wrap_index(v, p.n, j)) {
      report_index(err, v);
      continue;
    }
    out[a] = src[c + j * p.step];
  }
}

// ScatterParams: lines along the axis, placed by the kept dims (shape,
// with strides ko, ki, kv in out (or the accumulator), idx and values);
// each line has m indices and values (i_step, v_step apart) and n places
// in out (o_step apart). The scatters run one thread per (line, index)
// pair, e = line * m + index, in grid-stride loops.
struct ScatterParams {
  long lines, nd, m, n, o_step, i_step, v_step, out_off, idx_off, val_off;
  long shape[MAXD], ko[MAXD], ki[MAXD], kv[MAXD];
};

// scatter_place reads the index of pair e (line o, position q) and wraps
// it into j; false for an index out of range.
template <typename I>
inline bool scatter_place(device const I* idx, constant ScatterParams& p, long e, thread long& o, thread long& q,
                          thread long& v, thread long& j) {
  o = e / p.m;
  q = e % p.m;
  v = long(ldd(idx + p.idx_off + offset_of(o, p.nd, p.shape, p.ki) + q * p.i_step));
  return wrap_index(v, p.n, j);
}

// PutAlongAxis writes, where an index repeats, the later value (as the
// CPU), whatever order the threads run in: scatter_claim has each pair
// claim its place in own (lines x n, zeroed) with an atomic maximum of
// q + 1, and scatter_put then writes the values of the pairs that won.
// out already holds a copy of the array. Bad indices are reported by
// scatter_claim and skipped by scatter_put.
template <typename I>
kernel void scatter_claim(device const I* idx [[buffer(0)]], device atomic_uint* own [[buffer(1)]],
                          device atomic_uint* err [[buffer(2)]], constant ScatterParams& p [[buffer(3)]],
                          uint gid [[thread_position_in_grid]], uint nthreads [[threads_per_grid]]) {
  for (long e = gid; e < p.lines * p.m; e += nthreads) {
    long o, q, v, j;
    if (!scatter_place(idx, p, e, o, q, v, j)) {
      report_index(err, v);
      continue;
    }
    atomic_fetch_max_explicit(&own[o * p.n + j], uint(q + 1), memory_order_relaxed);
  }
}

template <typename W, typename I>
kernel void scatter_put(device W* out [[buffer(0)]], device const I* idx [[buffer(1)]],
                        device const W* val [[buffer(2)]], device const uint* own [[buffer(3)]],
                        constant ScatterParams& p [[buffer(4)]],
                        uint gid [[thread_position_in_grid]], uint nthreads [[threads_per_grid]]) {
  for (long e = gid; e < p.lines * p.m; e += nthreads) {
    long o, q, v, j;
    if (!scatter_place(idx, p, e, o, q, v, j) || own[o * p.n + j] != uint(q + 1)) continue;
    out[p.out_off + offset_of(o, p.nd, p.shape, p.ko) + j * p.o_step] =
        val[p.val_off + offset_of(o, p.nd, p.shape, p.kv) + q * p.v_step];
  }
}

// atomic_add adds v to *x atomically: float, int and uint natively; long
// and ulong (through atomic_add_u64, one body for both) as two
// 32-bit words, the carry out of the low word added to the high one (the
// final sum is exact, whatever the order; intermediate values are not
// read).
inline void atomic_add(device float* x, float v) {
  atomic_fetch_add_explicit((device atomic_float*)x, v, memory_order_relaxed);
}
inline void atomic_add(device int* x, int v) {
  atomic_fetch_add_explicit((device atomic_int*)x, v, memory_order_relaxed);
}
inline void atomic_add_u64(device ulong* x, ulong v) {
  device atomic_uint* w = (device atomic_uint*)x;
  uint lo = uint(v & 0xffffffffu), hi = uint(v >> 32);
  uint old = atomic_fetch_add_explicit(&w[0], lo, memory_order_relaxed);
  uint carry = old + lo < old ? 1u : 0u;
  if (hi + carry != 0u) atomic_fetch_add_explicit(&w[1], hi + carry, memory_order_relaxed);
}
inline void atomic_add(device uint* x, uint v) {
  atomic_fetch_add_explicit((device atomic_uint*)x, v, memory_order_relaxed);
}
inline void atomic_add(device long* x, long v) { atomic_add_u64((device ulong*)x, ulong(v)); }
inline void atomic_add(device ulong* x, ulong v) { atomic_add_u64(x, v); }

// scatter_add adds each pair's update into its place of acc, atomically:
// acc is out itself (zeroed) for float32 and the 32- and 64-bit integers,
// and a zeroed scratch of lines x n elements for float16 and bfloat16
// (float, rounded once when the plan copies it to out) and the 8- and
// 16-bit integers (int, wrapping: its low bits are the sum). Float sums are in an unspecified order.
template <typename T, typename A, typename I>
kernel void scatter_add(device A* acc [[buffer(0)]], device const I* idx [[buffer(1)]],
                        device const T* upd [[buffer(2)]], device atomic_uint* err [[buffer(3)]],
                        constant ScatterParams& p [[buffer(4)]],
                        uint gid [[thread_position_in_grid]], uint nthreads [[threads_per_grid]]) {
  for (long e = gid; e < p.lines * p.m; e += nthreads) {
    long o, q, v, j;
    if (!scatter_place(idx, p, e, o, q, v, j)) {
      report_index(err, v);
      continue;
    }
    atomic_add(acc + p.out_off + offset_of(o, p.nd, p.shape, p.ko) + j * p.o_step,
               A(ldd(upd + p.val_off + offset_of(o, p.nd, p.shape, p.kv) + q * p.v_step)));
  }
}


// ------------------------------------------------- MLX's gather and scatter
// Gather and Scatter (gather.go) take one slice of the array per position
// p of the indices' broadcast shape B. index_offsets_<index dtype> runs
// once per index array (one thread per p) and leaves in base[p] the
// offset of p's slice: wrap(idx[p]) * step summed over the index arrays.
// A bad index is reported and poisons base[p] with BAD_BASE, which the
// slice kernels skip. Then, one thread per (p, s), s an element of the
// slice: gather_slices_<bits> copies; scatter_slices_claim and
// scatter_slices_put_<bits> set (later p wins, as the CPU);
// scatter_slices_add_<dtype> adds atomically where Metal has the atomic;
// and scatter_slices_ordered_<dtype> (one thread per s, looping over p in
// order) combines every other mode and dtype exactly as the CPU does.
// Buffers: index_offsets: base, idx, err, OffsetParams; gather_slices:
// out, src, base, SliceParams; scatter_slices_claim: base, own,
// SliceParams; scatter_slices_put: out, upd, base, own, SliceParams;
// scatter_slices_add and scatter_slices_ordered: out, upd, base,
// SliceParams.

#define BAD_BASE (-0x7fffffffffffffffL - 1L)

// OffsetParams: total positions of B (nd dims after merging, the index's
// strides si), the indexed axis' size n and stride step, and first (1 for
// the first index array, which writes base rather than adds); slot is
// the index array's number, reported with a bad index.
struct OffsetParams {
  long total, nd, n, step, idx_off, first, slot;
  long shape[MAXD], si[MAXD];
};

inline void report_index_slot(device atomic_uint* err, long v, long slot) {
  if (atomic_exchange_explicit(&err[0], 1u, memory_order_relaxed) == 0u) {
    atomic_store_explicit(&err[1], uint(ulong(v) & 0xffffffffu), memory_order_relaxed);
    atomic_store_explicit(&err[2], uint(ulong(v) >> 32), memory_order_relaxed);
    atomic_store_explicit(&err[3], uint(slot), memory_order_relaxed);
  }
}

template <typename I>
kernel void index_offsets(device long* base [[buffer(0)]], device const I* idx [[buffer(1)]],
                          device atomic_uint* err [[buffer(2)]], constant OffsetParams& p [[buffer(3)]],
                          uint gid [[thread_position_in_grid]], uint nthreads [[threads_per_grid]]) {
  for (long e = gid; e < p.total; e += nthreads) {
    long v = long(ldd(idx + p.idx_off + offset_of(e, p.nd, p.shape, p.si))), j;
    if (!wrap_index(v, p.n, j)) {
      report_index_slot(err, v, p.slot);
      base[e] = BAD_BASE;
      continue;
    }
    if (p.first != 0) {
      base[e] = j * p.step;
    } else if (base[e] != BAD_BASE) {
      base[e] += j * p.step;
    }
  }
}

// SliceParams: total = positions (np) x slice elements (m); the slice has
// ns dims (shape) with strides sd in the destination (out for scatters,
// the source for gathers) and su in the updates; the updates' strides
// over B's nb dims (bshape) are bu. has_base is 0 when there are no index
// arrays (one position, at offset 0). mode is scatter_slices_ordered's
// combination.
struct SliceParams {
  long total, np, m, ns, nb, has_base, dst_off, upd_off, mode;
  long shape[MAXD], sd[MAXD], su[MAXD], bshape[MAXD], bu[MAXD];
};

// slice_base is the offset of position q's slice, or BAD_BASE.
inline long slice_base(device const long* base, constant SliceParams& p, long q) {
  return p.has_base != 0 ? base[q] : 0;
}

// upd_offset is the element offset of update (q, s) from upd_off.
inline long upd_offset(constant SliceParams& p, long q, long s) {
  return p.upd_off + offset_of(q, p.nb, p.bshape, p.bu) + offset_of(s, p.ns, p.shape, p.su);
}

// gather_slices writes out (row-major, contiguous) element e = q * m + s.
template <typename W>
kernel void gather_slices(device W* out [[buffer(0)]], device const W* src [[buffer(1)]],
                          device const long* base [[buffer(2)]], constant SliceParams& p [[buffer(3)]],
                          uint gid [[thread_position_in_grid]], uint nthreads [[threads_per_grid]]) {
  for (long e = gid; e < p.total; e += nthreads) {
    long q = e / p.m, s = e % p.m, b = slice_base(base, p, q);
    if (b == BAD_BASE) continue;
    out[e] = src[p.dst_off + b + offset_of(s, p.ns, p.shape, p.sd)];
  }
}

// Set: each (q, s) claims its element of out (own holds one uint per
// element of out, zeroed) with an atomic maximum of q + 1; the winners
// write. Distinct index tuples start disjoint slices, so an element's
// claimants are the positions of one tuple.
// A template of one instantiation: a plain kernel would be compiled into
// every unit of the split library (TestLibraryUnits).
template <typename U>
kernel void scatter_slices_claim(device const long* base [[buffer(0)]], device U* own [[buffer(1)]],
                                 constant SliceParams& p [[buffer(2)]],
                                 uint gid [[thread_position_in_grid]], uint nthreads [[threads_per_grid]]) {
  for (long e = gid; e < p.total; e += nthreads) {
    long q = e / p.m, s = e % p.m, b = slice_base(base, p, q);
    if (b == BAD_BASE) continue;
    atomic_fetch_max_explicit(&own[b + offset_of(s, p.ns, p.shape, p.sd)], uint(q + 1), memory_order_relaxed);
  }
}
instantiate_kernel("scatter_slices_claim", scatter_slices_claim, atomic_uint)

template <typename W>
kernel void scatter_slices_put(device W* out [[buffer(0)]], device const W* upd [[buffer(1)]],
                               device const long* base [[buffer(2)]], device const uint* own [[buffer(3)]],
                               constant SliceParams& p [[buffer(4)]],
                               uint gid [[thread_position_in_grid]], uint nthreads [[threads_per_grid]]) {
  for (long e = gid; e < p.total; e += nthreads) {
    long q = e / p.m, s = e % p.m, b = slice_base(base, p, q);
    if (b == BAD_BASE) continue;
    long d = b + offset_of(s, p.ns, p.shape, p.sd);
    if (own[d] != uint(q + 1)) continue;
    out[p.dst_off + d] = upd[upd_offset(p, q, s)];
  }
}

template <typename T>
kernel void scatter_slices_add(device T* out [[buffer(0)]], device const T* upd [[buffer(1)]],
                               device const long* base [[buffer(2)]], constant SliceParams& p [[buffer(3)]],
                               uint gid [[thread_position_in_grid]], uint nthreads [[threads_per_grid]]) {
  for (long e = gid; e < p.total; e += nthreads) {
    long q = e / p.m, s = e % p.m, b = slice_base(base, p, q);
    if (b == BAD_BASE) continue;
    atomic_add(out + p.dst_off + b + offset_of(s, p.ns, p.shape, p.sd), upd[upd_offset(p, q, s)]);
  }
}

// combine is the CPU's scatter combination (cpu.ScatterMode order: set,
// sum, prod, max, min); max and min propagate NaN as numpy's do.
template <typename C>
inline C combine(long mode, C x, C u) {
  switch (mode) {
    case 0:
      return u;
    case 1:
      return x + u;
    case 2:
      return x * u;
    case 3:
      return (x != x || x >= u) ? x : u;
    default:
      return (x != x || x <= u) ? x : u;
  }
}
template <>
inline bool combine(long mode, bool x, bool u) {
  return mode == 0 ? u : (mode == 1 || mode == 3) ? (x || u) : (x && u);
}
template <>
inline float2 combine(long mode, float2 x, float2 u) {
  return mode == 0 ? u : mode == 1 ? x + u : complex_mul(x, u);
}

// scatter_slices_ordered: one thread per slice element s applies every
// position's update in order, rounding 16-bit floats after each (as the
// CPU does): exact agreement for every mode, at the cost of parallelism
// only over the slice.
template <typename T>
kernel void scatter_slices_ordered(device T* out [[buffer(0)]], device const T* upd [[buffer(1)]],
                                   device const long* base [[buffer(2)]], constant SliceParams& p [[buffer(3)]],
                                   uint gid [[thread_position_in_grid]], uint nthreads [[threads_per_grid]]) {
  typedef typename Elem<T>::compute C;
  for (long s = gid; s < p.m; s += nthreads) {
    long ds = offset_of(s, p.ns, p.shape, p.sd);
    for (long q = 0; q < p.np; q++) {
      long b = slice_base(base, p, q);
      if (b == BAD_BASE) continue;
      device T* x = out + p.dst_off + b + ds;
      std_(x, combine<C>(p.mode, ldd(x), ldd(upd + upd_offset(p, q, s))));
    }
  }
}

// Instantiations, one line per index dtype (the harness and the host
// compile a line's kernels together, on first use of any of them), then
// the slice kernels, which take no index.
#define instantiate_words(prefix, kernel, I)                \
  instantiate_kernel(prefix "8_" #I, kernel, uchar, I##_ix)  \
  instantiate_kernel(prefix "16_" #I, kernel, ushort, I##_ix) \
  instantiate_kernel(prefix "32_" #I, kernel, uint, I##_ix)   \
  instantiate_kernel(prefix "64_" #I, kernel, ulong, I##_ix)

#define instantiate_add(tname, T, A, I) instantiate_kernel("scatter_add_" tname "_" #I, scatter_add, T, A, I##_ix)

#define instantiate_index(I)                              \
  instantiate_words("gather_", gather, I)                 \
  instantiate_kernel("scatter_claim_" #I, scatter_claim, I##_ix) \
  instantiate_words("scatter_put_", scatter_put, I)       \
  instantiate_add("float32", float, float, I)             \
  instantiate_add("float16", half, float, I)              \
  instantiate_add("bfloat16", bf16_t, float, I)           \
  instantiate_add("int32", int, int, I)                   \
  instantiate_add("int64", long, long, I)                 \
  instantiate_add("uint8", uchar, int, I)                 \
  instantiate_add("int8", char, int, I)                   \
  instantiate_add("int16", short, int, I)                 \
  instantiate_add("uint16", u16_t, int, I)                \
  instantiate_add("uint32", uint, uint, I)                \
  instantiate_add("uint64", ulong, ulong, I)              \
  instantiate_kernel("index_offsets_" #I, index_offsets, I##_ix)

// The index types by dtype name, for the macros above.
typedef uchar uint8_ix;
typedef char int8_ix;
typedef short int16_ix;
typedef u16_t uint16_ix;
typedef int int32_ix;
typedef uint uint32_ix;
typedef long int64_ix;
typedef ulong uint64_ix;

instantiate_index(uint8)
instantiate_index(int8)
instantiate_index(int16)
instantiate_index(uint16)
instantiate_index(int32)
instantiate_index(uint32)
instantiate_index(int64)
instantiate_index(uint64)

#define instantiate_slices(bits, W)                                  \
  instantiate_kernel("gather_slices_" #bits, gather_slices, W)       \
  instantiate_kernel("scatter_slices_put_" #bits, scatter_slices_put, W)

#define instantiate_all_slices(add)                                  \
  instantiate_slices(8, uchar)                                       \
  instantiate_slices(16, ushort)                                     \
  instantiate_slices(32, uint)                                       \
  instantiate_slices(64, ulong)                                      \
  instantiate_kernel(add "float32", scatter_slices_add, float)       \
  instantiate_kernel(add "int32", scatter_slices_add, int)           \
  instantiate_kernel(add "uint32", scatter_slices_add, uint)         \
  instantiate_kernel(add "int64", scatter_slices_add, long)          \
  instantiate_kernel(add "uint64", scatter_slices_add, ulong)

#define instantiate_ordered(prefix, tname, T) instantiate_kernel(prefix tname, scatter_slices_ordered, T)

#define instantiate_all_ordered(prefix)  \
  instantiate_ordered(prefix, "bool", bool)      \
  instantiate_ordered(prefix, "uint8", uchar)    \
  instantiate_ordered(prefix, "int8", char)      \
  instantiate_ordered(prefix, "int16", short)    \
  instantiate_ordered(prefix, "uint16", u16_t)   \
  instantiate_ordered(prefix, "int32", int)      \
  instantiate_ordered(prefix, "uint32", uint)    \
  instantiate_ordered(prefix, "int64", long)     \
  instantiate_ordered(prefix, "uint64", ulong)   \
  instantiate_ordered(prefix, "float16", half)   \
  instantiate_ordered(prefix, "bfloat16", bf16_t) \
  instantiate_ordered(prefix, "float32", float)  \
  instantiate_ordered(prefix, "complex64", float2)

instantiate_all_slices("scatter_slices_add_")
instantiate_all_ordered("scatter_slices_ordered_")
