// arg_reduce.metal: ArgMax and ArgMin along one axis (see ArgReduce in
// reduce.go). Host names: argmax_<dtype>, argmin_<dtype>.
// Buffers: [[buffer(0)]] in, [[buffer(1)]] out (int32), [[buffer(2)]]
// ArgParams.

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

// Arg reductions carry (value, index) pairs. better says whether (v, i)
// beats (w, j): the first NaN beats everything, then the larger (ArgMax)
// or smaller (ArgMin) value, then the smaller index, so every order of
// folding picks numpy's answer.
struct ArgMax {
  template <typename V> static V init() { return lowest<V>(); }
  template <typename V> static bool better(V v, uint i, V w, uint j) {
    bool vn = v != v, wn = w != w;
    if (vn || wn) return vn && (!wn || i < j);
    return v > w || (v == w && i < j);
  }
};

struct ArgMin {
  template <typename V> static V init() { return highest<V>(); }
  template <typename V> static bool better(V v, uint i, V w, uint j) {
    bool vn = v != v, wn = w != w;
    if (vn || wn) return vn && (!wn || i < j);
    return v < w || (v == w && i < j);
  }
};

// ArgParams: outs lines of n elements, step apart along the axis; the
// kept dims place each line in the input and its result in the output
// (out_step is unused: the output has no axis).
struct ArgParams {
  long n, outs, step, out_step, per_simd, in_off, out_off, nk;
  long kshape[MAXD], kin[MAXD], kout[MAXD];
};

// arg_reduce folds one line per simdgroup (short lines) or per
// threadgroup, the lanes reading consecutive elements of the line.
// The plans (lineGrid in reduce.go) launch 256 threads per threadgroup, or
// 1024 for lines longer than 8192: the kernel declares that maximum, so
// Metal compiles it to fit 1024 threads however many registers it needs.
template <typename In, typename V, typename Op>
[[kernel, max_total_threads_per_threadgroup(1024)]] void arg_reduce(
    device const In* in [[buffer(0)]], device int* out [[buffer(1)]],
    constant ArgParams& p [[buffer(2)]],
    uint tg [[threadgroup_position_in_grid]], uint ntg [[threadgroups_per_grid]],
    uint lid [[thread_index_in_threadgroup]], uint tpg [[threads_per_threadgroup]],
    uint sg [[simdgroup_index_in_threadgroup]], uint nsg [[simdgroups_per_threadgroup]],
    uint lane [[thread_index_in_simdgroup]]) {
  threadgroup V val_tg[32];
  threadgroup uint idx_tg[32];
  long first = p.per_simd ? long(tg) * nsg + sg : long(tg);
  long stride = p.per_simd ? long(ntg) * nsg : long(ntg);
  uint width = p.per_simd ? 32 : tpg;
  uint me = p.per_simd ? lane : lid;
  // Per-threadgroup lines depend only on tg: the barriers are uniform.
  for (long o = first; o < p.outs; o += stride) {
    device const In* base = in + p.in_off + offset_of(o, p.nk, p.kshape, p.kin);
    V best = Op::template init<V>();
    uint bi = 0xffffffffu;
    for (uint r = me; r < uint(p.n); r += width) {
      V v = ld<V>(elem_read(base + long(r) * p.step));
      if (Op::better(v, r, best, bi)) {
        best = v;
        bi = r;
      }
    }
    for (ushort d = 16; d > 0; d >>= 1) {
      V w = shfl_xor(best, d);
      uint j = simd_shuffle_xor(bi, d);
      if (Op::better(w, j, best, bi)) {
        best = w;
        bi = j;
      }
    }
    if (!p.per_simd) {
      if (lane == 0) {
        val_tg[sg] = best;
        idx_tg[sg] = bi;
      }
      threadgroup_barrier(mem_flags::mem_threadgroup);
      best = lane < nsg ? val_tg[lane] : Op::template init<V>();
      bi = lane < nsg ? idx_tg[lane] : 0xffffffffu;
      for (ushort d = 16; d > 0; d >>= 1) {
        V w = shfl_xor(best, d);
        uint j = simd_shuffle_xor(bi, d);
        if (Op::better(w, j, best, bi)) {
          best = w;
          bi = j;
        }
      }
      threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (me == 0) out[p.out_off + offset_of(o, p.nk, p.kshape, p.kout)] = int(bi);
  }
}

instantiate_kernel("argmax_float32", arg_reduce, float, float, ArgMax)
instantiate_kernel("argmax_float16", arg_reduce, half, float, ArgMax)
instantiate_kernel("argmax_bfloat16", arg_reduce, bf16_t, float, ArgMax)
instantiate_kernel("argmax_int32", arg_reduce, int, int, ArgMax)
instantiate_kernel("argmax_int64", arg_reduce, long, long, ArgMax)
instantiate_kernel("argmax_uint8", arg_reduce, uchar, uchar, ArgMax)
instantiate_kernel("argmax_bool", arg_reduce, bool, uchar, ArgMax)
instantiate_kernel("argmin_float32", arg_reduce, float, float, ArgMin)
instantiate_kernel("argmin_float16", arg_reduce, half, float, ArgMin)
instantiate_kernel("argmin_bfloat16", arg_reduce, bf16_t, float, ArgMin)
instantiate_kernel("argmin_int32", arg_reduce, int, int, ArgMin)
instantiate_kernel("argmin_int64", arg_reduce, long, long, ArgMin)
instantiate_kernel("argmin_uint8", arg_reduce, uchar, uchar, ArgMin)
instantiate_kernel("argmin_bool", arg_reduce, bool, uchar, ArgMin)
instantiate_kernel("argmax_int8", arg_reduce, char, int, ArgMax)
instantiate_kernel("argmax_int16", arg_reduce, short, int, ArgMax)
instantiate_kernel("argmax_uint16", arg_reduce, u16_t, uint, ArgMax)
instantiate_kernel("argmax_uint32", arg_reduce, uint, uint, ArgMax)
instantiate_kernel("argmax_uint64", arg_reduce, ulong, ulong, ArgMax)
instantiate_kernel("argmin_int8", arg_reduce, char, int, ArgMin)
instantiate_kernel("argmin_int16", arg_reduce, short, int, ArgMin)
instantiate_kernel("argmin_uint16", arg_reduce, u16_t, uint, ArgMin)
instantiate_kernel("argmin_uint32", arg_reduce, uint, uint, ArgMin)
instantiate_kernel("argmin_uint64", arg_reduce, ulong, ulong, ArgMin)
