// softmax.metal: Softmax, LogSoftmax and LogSumExp along one axis (see
// softmax.go). Host names: softmax_<dtype>, log_softmax_<dtype>,
// logsumexp_<dtype> for float32, float16 and bfloat16.
// Buffers: [[buffer(0)]] in, [[buffer(1)]] out, [[buffer(2)]]
// SoftmaxParams.

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

// The softmax family follows the CPU backend's (scipy's) formulas, in
// float:
//   softmax(x)     = exp(x - m) / sum(exp(x - m))          m = max(x), NaN if any
//   logsumexp(x)   = log(sum(exp(x - m'))) + m'            m' = m if finite, else 0
//   log_softmax(x) = (x - m') - log(sum(exp(x - m')))
#define SM_SOFTMAX 0
#define SM_LOG_SOFTMAX 1
#define SM_LOGSUMEXP 2

// SoftmaxParams: outs lines of n elements, in_step and out_step apart
// along the axis (out_step unused for logsumexp, whose output drops the
// axis); the kept dims place each line in the input and output.
struct SoftmaxParams {
  long n, outs, in_step, out_step, per_simd, in_off, out_off, nk;
  long kshape[MAXD], kin[MAXD], kout[MAXD];
};

// softmax_lines handles one line per simdgroup (short lines) or per
// threadgroup: three passes over the line (maximum, sum of exponentials,
// results), each folded across lanes with simd collectives and, per
// threadgroup, through threadgroup memory.
// The plans (lineGrid in reduce.go) launch 256 threads per threadgroup, or
// 1024 for lines longer than 8192: the kernel declares that maximum, so
// Metal compiles it to fit 1024 threads however many registers it needs.
template <typename T, int Kind>
[[kernel, max_total_threads_per_threadgroup(1024)]] void softmax_lines(
    device const T* in [[buffer(0)]], device T* out [[buffer(1)]],
    constant SoftmaxParams& p [[buffer(2)]],
    uint tg [[threadgroup_position_in_grid]], uint ntg [[threadgroups_per_grid]],
    uint lid [[thread_index_in_threadgroup]], uint tpg [[threads_per_threadgroup]],
    uint sg [[simdgroup_index_in_threadgroup]], uint nsg [[simdgroups_per_threadgroup]],
    uint lane [[thread_index_in_simdgroup]]) {
  threadgroup float part[32];
  long first = p.per_simd ? long(tg) * nsg + sg : long(tg);
  long stride = p.per_simd ? long(ntg) * nsg : long(ntg);
  long width = p.per_simd ? 32 : long(tpg);
  long me = p.per_simd ? long(lane) : long(lid);
  // Per-threadgroup lines depend only on tg: the barriers are uniform.
  for (long o = first; o < p.outs; o += stride) {
    device const T* x = in + p.in_off + offset_of(o, p.nk, p.kshape, p.kin);
    float m = -INFINITY;
    for (long r = me; r < p.n; r += width) m = OpMax::apply(m, ld<float>(x[r * p.in_step]));
    m = OpMax::simd(m);
    if (!p.per_simd) {
      if (lane == 0) part[sg] = m;
      threadgroup_barrier(mem_flags::mem_threadgroup);
      m = OpMax::simd(lane < nsg ? part[lane] : -INFINITY);
      threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    float shift = (Kind == SM_SOFTMAX || isfinite(m)) ? m : 0.0f;
    float s = 0.0f;
    for (long r = me; r < p.n; r += width) s += exp(ld<float>(x[r * p.in_step]) - shift);
    s = simd_sum(s);
    if (!p.per_simd) {
      if (lane == 0) part[sg] = s;
      threadgroup_barrier(mem_flags::mem_threadgroup);
      s = simd_sum(lane < nsg ? part[lane] : 0.0f);
      threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    device T* y = out + p.out_off + offset_of(o, p.nk, p.kshape, p.kout);
    if (Kind == SM_LOGSUMEXP) {
      if (me == 0) y[0] = st<T>(log(s) + shift);
    } else if (Kind == SM_SOFTMAX) {
      float inv = 1.0f / s;
      for (long r = me; r < p.n; r += width) y[r * p.out_step] = st<T>(exp(ld<float>(x[r * p.in_step]) - shift) * inv);
    } else {
      float ls = log(s);
      for (long r = me; r < p.n; r += width) y[r * p.out_step] = st<T>((ld<float>(x[r * p.in_step]) - shift) - ls);
    }
  }
}

instantiate_kernel("softmax_float32", softmax_lines, float, SM_SOFTMAX)
instantiate_kernel("softmax_float16", softmax_lines, half, SM_SOFTMAX)
instantiate_kernel("softmax_bfloat16", softmax_lines, bf16_t, SM_SOFTMAX)
instantiate_kernel("log_softmax_float32", softmax_lines, float, SM_LOG_SOFTMAX)
instantiate_kernel("log_softmax_float16", softmax_lines, half, SM_LOG_SOFTMAX)
instantiate_kernel("log_softmax_bfloat16", softmax_lines, bf16_t, SM_LOG_SOFTMAX)
instantiate_kernel("logsumexp_float32", softmax_lines, float, SM_LOGSUMEXP)
instantiate_kernel("logsumexp_float16", softmax_lines, half, SM_LOGSUMEXP)
instantiate_kernel("logsumexp_bfloat16", softmax_lines, bf16_t, SM_LOGSUMEXP)
