// matmul.metal: batched matrix products (see MatMul in matmul.go). Host
// names: gemm_<dtype> (tiled, threadgroup memory), gemv_<dtype> (N = 1,
// a simdgroup per output) and gemv_t_<dtype> (M = 1, a thread per output
// and part of K) with gemv_t_sum_<dtype> (adding the parts). Buffers:
// [[buffer(0)]] a, [[buffer(1)]] b, [[buffer(2)]] out, [[buffer(3)]]
// MatmulParams; gemv_t: a, b, out, partial sums, MatmulParams; gemv_t_sum:
// partial sums, out, MatmulParams. Accumulators: float for the float dtypes,
// the type itself for the integers (wrapping), int for bool (a count of
// true products, stored as "not zero").

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

// Simd shuffles take no 64-bit or 8-bit types here: those cross lanes as
// 32-bit words.
template <typename A> inline A shfl_xor(A x, ushort d) { return simd_shuffle_xor(x, d); }
template <> inline uchar shfl_xor(uchar x, ushort d) { return uchar(simd_shuffle_xor(uint(x), d)); }
template <> inline long shfl_xor(long x, ushort d) {
  uint2 v = as_type<uint2>(x);
  return as_type<long>(uint2(simd_shuffle_xor(v.x, d), simd_shuffle_xor(v.y, d)));
}
template <> inline ulong shfl_xor(ulong x, ushort d) {
  uint2 v = as_type<uint2>(x);
  return as_type<ulong>(uint2(simd_shuffle_xor(v.x, d), simd_shuffle_xor(v.y, d)));
}

// lowest and highest are the identities of max and min: infinities for
// float, the type's limits otherwise.
template <typename A> inline A lowest() { return numeric_limits<A>::lowest(); }
template <> inline float lowest<float>() { return -INFINITY; }
template <typename A> inline A highest() { return numeric_limits<A>::max(); }
template <> inline float highest<float>() { return INFINITY; }

// acc_add and acc_mul: float arithmetic, or wrapping integer arithmetic.
inline float acc_add(float a, float b) { return a + b; }
template <typename A> inline A acc_add(A a, A b) { return wrap_add(a, b); }
inline float acc_mul(float a, float b) { return a * b; }
template <typename A> inline A acc_mul(A a, A b) { return wrap_mul(a, b); }

// simd_tree folds x over the 32 lanes of a full simdgroup (plans launch
// whole simdgroups only) with Op; every lane gets the result.
template <typename Op, typename A> inline A simd_tree(A x) {
  for (ushort d = 16; d > 0; d >>= 1) {
    x = Op::apply(x, shfl_xor(x, d));
  }
  return x;
}

// Reduction ops over accumulators (float, int, long, or uchar for uint8
// and bool). init is the identity, apply folds two values (Max and Min
// propagate NaN), load turns an element into an accumulator, and simd
// folds across a simdgroup with the hardware collective where its
// semantics match.
struct OpSum {
  template <typename A> static A init() { return A(0); }
  template <typename A> static A apply(A a, A b) { return acc_add(a, b); }
  template <typename A, typename S> static A load(S x) { return ld<A>(x); }
  static float simd(float x) { return simd_sum(x); }
  static int simd(int x) { return as_type<int>(simd_sum(as_type<uint>(x))); }
  template <typename A> static A simd(A x) { return simd_tree<OpSum>(x); }
};
struct OpProd {
  template <typename A> static A init() { return A(1); }
  template <typename A> static A apply(A a, A b) { return acc_mul(a, b); }
  template <typename A, typename S> static A load(S x) { return ld<A>(x); }
  static float simd(float x) { return simd_product(x); }
  template <typename A> static A simd(A x) { return simd_tree<OpProd>(x); }
};
struct OpMax {
  template <typename A> static A init() { return lowest<A>(); }
  template <typename A> static A apply(A a, A b) { return (a > b || a != a) ? a : b; }
  template <typename A, typename S> static A load(S x) { return ld<A>(x); }
  static float simd(float x) { return simd_any(isnan(x)) ? NAN : simd_max(x); }
  static int simd(int x) { return simd_max(x); }
  template <typename A> static A simd(A x) { return simd_tree<OpMax>(x); }
};
struct OpMin {
  template <typename A> static A init() { return highest<A>(); }
  template <typename A> static A apply(A a, A b) { return (a < b || a != a) ? a : b; }
  template <typename A, typename S> static A load(S x) { return ld<A>(x); }
  static float simd(float x) { return simd_any(isnan(x)) ? NAN : simd_min(x); }
  static int simd(int x) { return simd_min(x); }
  template <typename A> static A simd(A x) { return simd_tree<OpMin>(x); }
};
// All and Any fold "not zero" (NaN is, -0 is not) as 0 or 1.
struct OpAll {
  template <typename A> static A init() { return A(1); }
  template <typename A> static A apply(A a, A b) { return A(a & b); }
  template <typename A, typename S> static A load(S x) { return ld<float>(x) != 0.0f ? A(1) : A(0); }
  template <typename A> static A simd(A x) { return simd_tree<OpAll>(x); }
};
struct OpAny {
  template <typename A> static A init() { return A(0); }
  template <typename A> static A apply(A a, A b) { return A(a | b); }
  template <typename A, typename S> static A load(S x) { return ld<float>(x) != 0.0f ? A(1) : A(0); }
  template <typename A> static A simd(A x) { return simd_tree<OpAny>(x); }
};

// MatmulParams: out[b] = a[b] @ b[b] for every batch index b, with
// matrices of M x K, K x N and M x N given by their row and column
// strides. The batch dims (bshape, nb of them) carry strides for a, b and
// out; zero strides broadcast.
// parts and chunk split K for gemv_t (see there); 1 and K elsewhere.
struct MatmulParams {
  long M, N, K, batches, nb, a_off, b_off, o_off;
  long a_rs, a_cs, b_rs, b_cs, o_rs, o_cs, parts, chunk;
  long bshape[MAXD], abs[MAXD], bbs[MAXD], obs[MAXD];
};

// mul_add is acc + x*y, wrapping for integers.
template <typename A> inline A mul_add(A acc, A x, A y) { return acc_add(acc, acc_mul(x, y)); }
template <> inline float mul_add(float acc, float x, float y) { return fma(x, y, acc); }

// GEMM tiles: a 16x16 threadgroup computes a 64x64 block of out, each
// thread a 4x4 grid of it (rows ty + 16i, columns tx + 16j), stepping
// through K 16 at a time with both tiles staged in threadgroup memory.
// The grid is whole threadgroups (the plan rounds it up), so every thread
// helps load every tile; loads and stores outside the matrices are
// masked.
#define MM_BM 64
#define MM_BN 64
#define MM_BK 16

// The position attributes agree in component count (uint3, as the grid is
// 3-D: the batch is z), as Metal requires of every kernel.
template <typename T, typename A>
[[kernel, max_total_threads_per_threadgroup(256)]] void gemm(
    device const T* a [[buffer(0)]], device const T* b [[buffer(1)]], device T* out [[buffer(2)]],
    constant MatmulParams& p [[buffer(3)]], uint3 tg [[threadgroup_position_in_grid]],
    uint3 lid [[thread_position_in_threadgroup]], uint t [[thread_index_in_threadgroup]]) {
  threadgroup A ta[MM_BK][MM_BM];
  threadgroup A tb[MM_BK][MM_BN];
  long batch = tg.z;
  device const T* ab = a + p.a_off + offset_of(batch, p.nb, p.bshape, p.abs);
  device const T* bb = b + p.b_off + offset_of(batch, p.nb, p.bshape, p.bbs);
  long m0 = long(tg.y) * MM_BM, n0 = long(tg.x) * MM_BN;
  A acc[4][4];
  for (int i = 0; i < 4; i++) {
    for (int j = 0; j < 4; j++) acc[i][j] = A(0);
  }
  for (long k0 = 0; k0 < p.K; k0 += MM_BK) {
    for (uint e = t; e < MM_BM * MM_BK; e += 256) {
      uint mi = e / MM_BK, ki = e % MM_BK;
      long m = m0 + mi, k = k0 + ki;
      ta[ki][mi] = (m < p.M && k < p.K) ? ld<A>(elem_read(ab + m * p.a_rs + k * p.a_cs)) : A(0);
    }
    for (uint e = t; e < MM_BK * MM_BN; e += 256) {
      uint ki = e / MM_BN, ni = e % MM_BN;
      long k = k0 + ki, n = n0 + ni;
      tb[ki][ni] = (k < p.K && n < p.N) ? ld<A>(elem_read(bb + k * p.b_rs + n * p.b_cs)) : A(0);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint k = 0; k < MM_BK; k++) {
      A x[4], y[4];
      for (int i = 0; i < 4; i++) x[i] = ta[k][lid.y + 16 * i];
      for (int j = 0; j < 4; j++) y[j] = tb[k][lid.x + 16 * j];
      for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) acc[i][j] = mul_add(acc[i][j], x[i], y[j]);
      }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  device T* ob = out + p.o_off + offset_of(batch, p.nb, p.bshape, p.obs);
  for (int i = 0; i < 4; i++) {
    long m = m0 + lid.y + 16 * i;
    for (int j = 0; j < 4; j++) {
      long n = n0 + lid.x + 16 * j;
      if (m < p.M && n < p.N) elem_write(ob + m * p.o_rs + n * p.o_cs, st<T>(acc[i][j]));
    }
  }
}

// gemv computes out[m, 0] = a[m, :] . b[:, 0] with one simdgroup per
// output, the lanes reading consecutive k (for a whose rows are
// contiguous). The grid is whole simdgroups: rows past M fold nothing.
template <typename T, typename A>
kernel void gemv(device const T* a [[buffer(0)]], device const T* b [[buffer(1)]], device T* out [[buffer(2)]],
                 constant MatmulParams& p [[buffer(3)]], uint2 gid [[thread_position_in_grid]],
                 uint lane [[thread_index_in_simdgroup]]) {
  long m = gid.x / 32, batch = gid.y;
  device const T* ab = a + p.a_off + offset_of(batch, p.nb, p.bshape, p.abs);
  device const T* bb = b + p.b_off + offset_of(batch, p.nb, p.bshape, p.bbs);
  A acc = A(0);
  if (m < p.M) {
    for (long k = lane; k < p.K; k += 32) {
      acc = mul_add(acc, ld<A>(elem_read(ab + m * p.a_rs + k * p.a_cs)), ld<A>(elem_read(bb + k * p.b_rs)));
    }
  }
  acc = OpSum::simd(acc);
  if (m < p.M && lane == 0) {
    elem_write(out + p.o_off + offset_of(batch, p.nb, p.bshape, p.obs) + m * p.o_rs, st<T>(acc));
  }
}

// gemv_t computes out[0, n] = a[0, :] . b[:, n] with one thread per
// output and part of K (gid.y), looping over chunk elements of K, so
// neighbouring threads read neighbouring elements of b's rows and no
// thread runs long. With one part it writes out; with several, each
// writes its partial sum to part[(batch * parts + q) * N + n] and
// gemv_t_sum adds them in order.
template <typename T, typename A>
kernel void gemv_t(device const T* a [[buffer(0)]], device const T* b [[buffer(1)]], device T* out [[buffer(2)]],
                   device A* part [[buffer(3)]], constant MatmulParams& p [[buffer(4)]],
                   uint3 gid [[thread_position_in_grid]]) {
  long n = gid.x, q = gid.y, batch = gid.z;
  if (n >= p.N) return;
  device const T* ab = a + p.a_off + offset_of(batch, p.nb, p.bshape, p.abs);
  device const T* bb = b + p.b_off + offset_of(batch, p.nb, p.bshape, p.bbs);
  A acc = A(0);
  long hi = min64(p.K, (q + 1) * p.chunk);
  for (long k = q * p.chunk; k < hi; k++) {
    acc = mul_add(acc, ld<A>(elem_read(ab + k * p.a_cs)), ld<A>(elem_read(bb + k * p.b_rs + n * p.b_cs)));
  }
  if (p.parts == 1) {
    elem_write(out + p.o_off + offset_of(batch, p.nb, p.bshape, p.obs) + n * p.o_cs, st<T>(acc));
  } else {
    part[(batch * p.parts + q) * p.N + n] = acc;
  }
}

// gemv_t_sum adds the parts of gemv_t's output n in order.
template <typename T, typename A>
kernel void gemv_t_sum(device const A* part [[buffer(0)]], device T* out [[buffer(1)]],
                       constant MatmulParams& p [[buffer(2)]], uint2 gid [[thread_position_in_grid]]) {
  long n = gid.x, batch = gid.y;
  if (n >= p.N) return;
  A acc = A(0);
  for (long q = 0; q < p.parts; q++) acc = acc_add(acc, part[(batch * p.parts + q) * p.N + n]);
  elem_write(out + p.o_off + offset_of(batch, p.nb, p.bshape, p.obs) + n * p.o_cs, st<T>(acc));
}

instantiate_kernel("gemm_float32", gemm, float, float)
instantiate_kernel("gemm_float16", gemm, half, float)
instantiate_kernel("gemm_bfloat16", gemm, bf16_t, float)
instantiate_kernel("gemm_int32", gemm, int, int)
instantiate_kernel("gemm_int64", gemm, long, long)
instantiate_kernel("gemm_uint8", gemm, uchar, uchar)
instantiate_kernel("gemm_bool", gemm, bool, int)
instantiate_kernel("gemv_float32", gemv, float, float)
instantiate_kernel("gemv_float16", gemv, half, float)
instantiate_kernel("gemv_bfloat16", gemv, bf16_t, float)
instantiate_kernel("gemv_int32", gemv, int, int)
instantiate_kernel("gemv_int64", gemv, long, long)
instantiate_kernel("gemv_uint8", gemv, uchar, uchar)
instantiate_kernel("gemv_bool", gemv, bool, int)
instantiate_kernel("gemv_t_float32", gemv_t, float, float)
instantiate_kernel("gemv_t_float16", gemv_t, half, float)
instantiate_kernel("gemv_t_bfloat16", gemv_t, bf16_t, float)
instantiate_kernel("gemv_t_int32", gemv_t, int, int)
instantiate_kernel("gemv_t_int64", gemv_t, long, long)
instantiate_kernel("gemv_t_uint8", gemv_t, uchar, uchar)
instantiate_kernel("gemv_t_bool", gemv_t, bool, int)
instantiate_kernel("gemv_t_sum_float32", gemv_t_sum, float, float)
instantiate_kernel("gemv_t_sum_float16", gemv_t_sum, half, float)
instantiate_kernel("gemv_t_sum_bfloat16", gemv_t_sum, bf16_t, float)
instantiate_kernel("gemv_t_sum_int32", gemv_t_sum, int, int)
instantiate_kernel("gemv_t_sum_int64", gemv_t_sum, long, long)
instantiate_kernel("gemv_t_sum_uint8", gemv_t_sum, uchar, uchar)
instantiate_kernel("gemv_t_sum_bool", gemv_t_sum, bool, int)
instantiate_kernel("gemm_int8", gemm, char, int)
instantiate_kernel("gemm_int16", gemm, short, int)
instantiate_kernel("gemm_uint16", gemm, u16_t, uint)
instantiate_kernel("gemm_uint32", gemm, uint, uint)
instantiate_kernel("gemm_uint64", gemm, ulong, ulong)
instantiate_kernel("gemv_int8", gemv, char, int)
instantiate_kernel("gemv_int16", gemv, short, int)
instantiate_kernel("gemv_uint16", gemv, u16_t, uint)
instantiate_kernel("gemv_uint32", gemv, uint, uint)
instantiate_kernel("gemv_uint64", gemv, ulong, ulong)
instantiate_kernel("gemv_t_int8", gemv_t, char, int)
instantiate_kernel("gemv_t_int16", gemv_t, short, int)
instantiate_kernel("gemv_t_uint16", gemv_t, u16_t, uint)
instantiate_kernel("gemv_t_uint32", gemv_t, uint, uint)
instantiate_kernel("gemv_t_uint64", gemv_t, ulong, ulong)
instantiate_kernel("gemv_t_sum_int8", gemv_t_sum, char, int)
instantiate_kernel("gemv_t_sum_int16", gemv_t_sum, short, int)
instantiate_kernel("gemv_t_sum_uint16", gemv_t_sum, u16_t, uint)
instantiate_kernel("gemv_t_sum_uint32", gemv_t_sum, uint, uint)
instantiate_kernel("gemv_t_sum_uint64", gemv_t_sum, ulong, ulong)
