// gather.metal: Take and TakeAlongAxis (gather_<bits>_<index dtype>),
// PutAlongAxis (scatter_claim_<index dtype>, then
// scatter_put_<bits>_<index dtype>) and ScatterAddAlongAxis
// (scatter_add_<dtype>_<index dtype>); see gather.go. bits is the element
// size (8, 16, 32, 64): gathers move elements as words.
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
    long v = long(idx[b]), j;
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
  v = long(idx[p.idx_off + offset_of(o, p.nd, p.shape, p.ki) + q * p.i_step]);
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
               ld<A>(upd[p.val_off + offset_of(o, p.nd, p.shape, p.kv) + q * p.v_step]));
  }
}

instantiate_kernel("gather_8_uint8", gather, uchar, uchar)
instantiate_kernel("gather_8_int32", gather, uchar, int)
instantiate_kernel("gather_8_int64", gather, uchar, long)
instantiate_kernel("gather_16_uint8", gather, ushort, uchar)
instantiate_kernel("gather_16_int32", gather, ushort, int)
instantiate_kernel("gather_16_int64", gather, ushort, long)
instantiate_kernel("gather_32_uint8", gather, uint, uchar)
instantiate_kernel("gather_32_int32", gather, uint, int)
instantiate_kernel("gather_32_int64", gather, uint, long)
instantiate_kernel("gather_64_uint8", gather, ulong, uchar)
instantiate_kernel("gather_64_int32", gather, ulong, int)
instantiate_kernel("gather_64_int64", gather, ulong, long)
instantiate_kernel("scatter_claim_uint8", scatter_claim, uchar)
instantiate_kernel("scatter_claim_int32", scatter_claim, int)
instantiate_kernel("scatter_claim_int64", scatter_claim, long)
instantiate_kernel("scatter_put_8_uint8", scatter_put, uchar, uchar)
instantiate_kernel("scatter_put_8_int32", scatter_put, uchar, int)
instantiate_kernel("scatter_put_8_int64", scatter_put, uchar, long)
instantiate_kernel("scatter_put_16_uint8", scatter_put, ushort, uchar)
instantiate_kernel("scatter_put_16_int32", scatter_put, ushort, int)
instantiate_kernel("scatter_put_16_int64", scatter_put, ushort, long)
instantiate_kernel("scatter_put_32_uint8", scatter_put, uint, uchar)
instantiate_kernel("scatter_put_32_int32", scatter_put, uint, int)
instantiate_kernel("scatter_put_32_int64", scatter_put, uint, long)
instantiate_kernel("scatter_put_64_uint8", scatter_put, ulong, uchar)
instantiate_kernel("scatter_put_64_int32", scatter_put, ulong, int)
instantiate_kernel("scatter_put_64_int64", scatter_put, ulong, long)
instantiate_kernel("scatter_add_float32_uint8", scatter_add, float, float, uchar)
instantiate_kernel("scatter_add_float32_int32", scatter_add, float, float, int)
instantiate_kernel("scatter_add_float32_int64", scatter_add, float, float, long)
instantiate_kernel("scatter_add_float16_uint8", scatter_add, half, float, uchar)
instantiate_kernel("scatter_add_float16_int32", scatter_add, half, float, int)
instantiate_kernel("scatter_add_float16_int64", scatter_add, half, float, long)
instantiate_kernel("scatter_add_bfloat16_uint8", scatter_add, bf16_t, float, uchar)
instantiate_kernel("scatter_add_bfloat16_int32", scatter_add, bf16_t, float, int)
instantiate_kernel("scatter_add_bfloat16_int64", scatter_add, bf16_t, float, long)
instantiate_kernel("scatter_add_int32_uint8", scatter_add, int, int, uchar)
instantiate_kernel("scatter_add_int32_int32", scatter_add, int, int, int)
instantiate_kernel("scatter_add_int32_int64", scatter_add, int, int, long)
instantiate_kernel("scatter_add_int64_uint8", scatter_add, long, long, uchar)
instantiate_kernel("scatter_add_int64_int32", scatter_add, long, long, int)
instantiate_kernel("scatter_add_int64_int64", scatter_add, long, long, long)
instantiate_kernel("scatter_add_uint8_uint8", scatter_add, uchar, int, uchar)
instantiate_kernel("scatter_add_uint8_int32", scatter_add, uchar, int, int)
instantiate_kernel("scatter_add_uint8_int64", scatter_add, uchar, int, long)
instantiate_kernel("scatter_add_int8_uint8", scatter_add, char, int, uchar)
instantiate_kernel("scatter_add_int8_int32", scatter_add, char, int, int)
instantiate_kernel("scatter_add_int8_int64", scatter_add, char, int, long)
instantiate_kernel("scatter_add_int16_uint8", scatter_add, short, int, uchar)
instantiate_kernel("scatter_add_int16_int32", scatter_add, short, int, int)
instantiate_kernel("scatter_add_int16_int64", scatter_add, short, int, long)
instantiate_kernel("scatter_add_uint16_uint8", scatter_add, u16_t, int, uchar)
instantiate_kernel("scatter_add_uint16_int32", scatter_add, u16_t, int, int)
instantiate_kernel("scatter_add_uint16_int64", scatter_add, u16_t, int, long)
instantiate_kernel("scatter_add_uint32_uint8", scatter_add, uint, uint, uchar)
instantiate_kernel("scatter_add_uint32_int32", scatter_add, uint, uint, int)
instantiate_kernel("scatter_add_uint32_int64", scatter_add, uint, uint, long)
instantiate_kernel("scatter_add_uint64_uint8", scatter_add, ulong, ulong, uchar)
instantiate_kernel("scatter_add_uint64_int32", scatter_add, ulong, ulong, int)
instantiate_kernel("scatter_add_uint64_int64", scatter_add, ulong, ulong, long)
