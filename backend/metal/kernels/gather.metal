// gather.metal: Take and TakeAlongAxis (gather_<bits>_<index dtype>),
// PutAlongAxis (scatter_put_<bits>_<index dtype>) and ScatterAddAlongAxis
// (scatter_add_<dtype>_<index dtype>); see gather.go. bits is the element
// size (8, 16, 32, 64): gathers move elements as words.
// Buffers: gather: out, src, idx, err, GatherParams; scatter_put: out,
// idx, values, err, ScatterParams; scatter_add: out, idx, updates, err,
// acc (float scratch), ScatterParams.

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
// with strides ko, ki, kv in out, idx and values); each line has m
// indices and values (ki_step, kv_step apart) and n places in out
// (o_step apart).
struct ScatterParams {
  long lines, nd, m, n, o_step, i_step, v_step, out_off, idx_off, val_off;
  long shape[MAXD], ko[MAXD], ki[MAXD], kv[MAXD];
};

// scatter_put writes the values of one line per thread in order, so when
// an index repeats the later value wins, as on the CPU. out already holds
// a copy of the array.
template <typename W, typename I>
kernel void scatter_put(device W* out [[buffer(0)]], device const I* idx [[buffer(1)]],
                        device const W* val [[buffer(2)]], device atomic_uint* err [[buffer(3)]],
                        constant ScatterParams& p [[buffer(4)]], uint gid [[thread_position_in_grid]]) {
  if (gid >= p.lines) return;
  long a = p.out_off + offset_of(gid, p.nd, p.shape, p.ko);
  long b = p.idx_off + offset_of(gid, p.nd, p.shape, p.ki);
  long c = p.val_off + offset_of(gid, p.nd, p.shape, p.kv);
  for (long q = 0; q < p.m; q++) {
    long v = long(idx[b + q * p.i_step]), j;
    if (!wrap_index(v, p.n, j)) {
      report_index(err, v);
      return;
    }
    out[a + j * p.o_step] = val[c + q * p.v_step];
  }
}

inline float add_elem(float a, float b) { return a + b; }
template <typename T> inline T add_elem(T a, T b) { return wrap_add(a, b); }

// add_line accumulates one line of scatter_add: through a float scratch
// line s for float16 and bfloat16 (rounded once at the end), in place
// for the other types (wrapping for integers).
template <typename T, typename Acc> struct add_line {
  static void zero(device T* o, long step, device Acc* s, long n) {
    for (long t = 0; t < n; t++) s[t] = Acc(0);
  }
  static void add(device T* o, long step, device Acc* s, long j, T u) { s[j] += ld<Acc>(u); }
  static void finish(device T* o, long step, device Acc* s, long n) {
    for (long t = 0; t < n; t++) o[t * step] = st<T>(s[t]);
  }
};
template <typename T> struct add_line<T, T> {
  static void zero(device T* o, long step, device T* s, long n) {
    for (long t = 0; t < n; t++) o[t * step] = T(0);
  }
  static void add(device T* o, long step, device T* s, long j, T u) {
    o[j * step] = add_elem(o[j * step], u);
  }
  static void finish(device T* o, long step, device T* s, long n) {}
};

// scatter_add zeroes one line of out per thread and adds the line's
// updates into it in order (the CPU's order, so float sums agree
// exactly). acc is float scratch of lines x n for float16 and bfloat16,
// and unused otherwise.
template <typename T, typename Acc, typename I>
kernel void scatter_add(device T* out [[buffer(0)]], device const I* idx [[buffer(1)]],
                        device const T* upd [[buffer(2)]], device atomic_uint* err [[buffer(3)]],
                        device Acc* acc [[buffer(4)]], constant ScatterParams& p [[buffer(5)]],
                        uint gid [[thread_position_in_grid]]) {
  if (gid >= p.lines) return;
  device T* o = out + p.out_off + offset_of(gid, p.nd, p.shape, p.ko);
  long b = p.idx_off + offset_of(gid, p.nd, p.shape, p.ki);
  long c = p.val_off + offset_of(gid, p.nd, p.shape, p.kv);
  device Acc* s = acc + long(gid) * p.n;
  add_line<T, Acc>::zero(o, p.o_step, s, p.n);
  for (long q = 0; q < p.m; q++) {
    long v = long(idx[b + q * p.i_step]), j;
    if (!wrap_index(v, p.n, j)) {
      report_index(err, v);
      return;
    }
    add_line<T, Acc>::add(o, p.o_step, s, j, upd[c + q * p.v_step]);
  }
  add_line<T, Acc>::finish(o, p.o_step, s, p.n);
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
instantiate_kernel("scatter_add_uint8_uint8", scatter_add, uchar, uchar, uchar)
instantiate_kernel("scatter_add_uint8_int32", scatter_add, uchar, uchar, int)
instantiate_kernel("scatter_add_uint8_int64", scatter_add, uchar, uchar, long)
