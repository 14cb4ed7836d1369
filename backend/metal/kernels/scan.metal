// scan.metal: CumSum, CumProd, CumMax, CumMin and LogCumSumExp along one axis, inclusive
// or exclusive, forward or reversed (see scan.go). Host names:
// cumsum_<dtype>, cumprod_<dtype>, cummax_<dtype>, cummin_<dtype>,
// logcumsumexp_<float dtype>.
// Buffers: [[buffer(0)]] in, [[buffer(1)]] out, [[buffer(2)]] ScanParams.

// ------------------------------------------------------------ helpers
// ld and st move values between a storage type and the type a kernel
// computes in (through Elem, so 16-bit floats widen to float and round
// once on store; bool is 0 or 1 and stores "not zero").
template <typename A, typename S> inline A ld(S x) { return A(Elem<S>::load(x)); }
template <typename S, typename A> inline S st(A a) { return Elem<S>::store(typename Elem<S>::compute(a)); }

// ldv and stv read and write one element in device memory. u16_t, a
// struct, is copied through its member: a struct in device memory does
// not bind to the thread address space's copy constructor or assignment.
template <typename S> inline S ldv(device const S* p) { return *p; }
template <> inline u16_t ldv(device const u16_t* p) {
  u16_t r;
  r.v = p->v;
  return r;
}
template <typename S> inline void stv(device S* p, S v) { *p = v; }
template <> inline void stv(device u16_t* p, u16_t v) { p->v = v.v; }

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
// OpMaxOf and OpMinOf start from the limits of a narrow storage type S
// (int8, int16), which the wider accumulator's own limits would wrap to
// when an exclusive scan stores its first result.
template <typename S> struct OpMaxOf : OpMax {
  template <typename A> static A init() { return A(numeric_limits<S>::lowest()); }
};
template <typename S> struct OpMinOf : OpMin {
  template <typename A> static A init() { return A(numeric_limits<S>::max()); }
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

// OpLogAddExp folds log(e^a + e^b) with the binary LogAddExp functor of
// common.h (numpy's logaddexp), so the scan and the elementwise op agree
// on infinities and NaN; its accumulator is float for every dtype.
struct OpLogAddExp {
  template <typename A> static A init() { return -INFINITY; }
  template <typename A> static A apply(A a, A b) { return LogAddExp()(a, b); }
  template <typename A, typename S> static A load(S x) { return ld<A>(x); }
};

template <typename A> inline A shfl_up(A x, ushort d) { return simd_shuffle_up(x, d); }
template <> inline long shfl_up(long x, ushort d) {
  uint2 v = as_type<uint2>(x);
  v.x = simd_shuffle_up(v.x, d);
  v.y = simd_shuffle_up(v.y, d);
  return as_type<long>(v);
}
template <> inline ulong shfl_up(ulong x, ushort d) {
  uint2 v = as_type<uint2>(x);
  v.x = simd_shuffle_up(v.x, d);
  v.y = simd_shuffle_up(v.y, d);
  return as_type<ulong>(v);
}
template <typename A> inline A shfl(A x, ushort lane) { return simd_shuffle(x, lane); }
template <> inline long shfl(long x, ushort lane) {
  uint2 v = as_type<uint2>(x);
  v.x = simd_shuffle(v.x, lane);
  v.y = simd_shuffle(v.y, lane);
  return as_type<long>(v);
}
template <> inline ulong shfl(ulong x, ushort lane) {
  uint2 v = as_type<uint2>(x);
  v.x = simd_shuffle(v.x, lane);
  v.y = simd_shuffle(v.y, lane);
  return as_type<ulong>(v);
}

// simd_scan is the inclusive scan of x over the 32 lanes (Hillis-Steele).
template <typename Op, typename A> inline A simd_scan(A x, uint lane) {
  for (ushort d = 1; d < 32; d <<= 1) {
    A y = shfl_up(x, d);
    if (lane >= d) x = Op::apply(y, x);
  }
  return x;
}

// ScanParams: outs lines of n elements, in_step and out_step apart along
// the axis, placed by the kept dims; reverse scans from the end, and
// exclusive leaves each element out of its own result.
struct ScanParams {
  long n, outs, in_step, out_step, per_simd, reverse, inclusive, in_off, out_off, nk;
  long kshape[MAXD], kin[MAXD], kout[MAXD];
};

// scan_lines runs one line per simdgroup (short lines) or per threadgroup,
// a chunk of as many elements as lanes at a time: a scan inside each
// simdgroup, then across the simdgroups' totals through threadgroup
// memory, then the carry from earlier chunks.
// The plans (lineGrid in reduce.go) launch 256 threads per threadgroup, or
// 1024 for lines longer than 8192: the kernel declares that maximum, so
// Metal compiles it to fit 1024 threads however many registers it needs.
template <typename In, typename Acc, typename Out, typename Op>
[[kernel, max_total_threads_per_threadgroup(1024)]] void scan_lines(
    device const In* in [[buffer(0)]], device Out* out [[buffer(1)]],
    constant ScanParams& p [[buffer(2)]],
    uint tg [[threadgroup_position_in_grid]], uint ntg [[threadgroups_per_grid]],
    uint lid [[thread_index_in_threadgroup]], uint tpg [[threads_per_threadgroup]],
    uint sg [[simdgroup_index_in_threadgroup]], uint nsg [[simdgroups_per_threadgroup]],
    uint lane [[thread_index_in_simdgroup]]) {
  threadgroup Acc part[33];
  long first = p.per_simd ? long(tg) * nsg + sg : long(tg);
  long stride = p.per_simd ? long(ntg) * nsg : long(ntg);
  long width = p.per_simd ? 32 : long(tpg);
  long me = p.per_simd ? long(lane) : long(lid);
  // Per-threadgroup lines depend only on tg: the barriers are uniform.
  for (long o = first; o < p.outs; o += stride) {
    device const In* x = in + p.in_off + offset_of(o, p.nk, p.kshape, p.kin);
    device Out* y = out + p.out_off + offset_of(o, p.nk, p.kshape, p.kout);
    Acc carry = Op::template init<Acc>();
    for (long c = 0; c < p.n; c += width) {
      long j = c + me;
      long pos = p.reverse ? p.n - 1 - j : j;
      Acc v = j < p.n ? Op::template load<Acc>(ldv(x + pos * p.in_step)) : Op::template init<Acc>();
      Acc inc = simd_scan<Op>(v, lane);
      Acc exc = shfl_up(inc, 1);
      if (lane == 0) exc = Op::template init<Acc>();
      Acc total;
      if (p.per_simd) {
        total = shfl(inc, 31);
      } else {
        if (lane == 31) part[sg] = inc;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (sg == 0) {
          Acc t = lane < nsg ? part[lane] : Op::template init<Acc>();
          Acc ti = simd_scan<Op>(t, lane);
          Acc te = shfl_up(ti, 1);
          part[lane] = lane == 0 ? Op::template init<Acc>() : te;
          if (lane == 31) part[32] = ti;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        Acc before = part[sg];
        inc = Op::apply(before, inc);
        exc = Op::apply(before, exc);
        total = part[32];
        threadgroup_barrier(mem_flags::mem_threadgroup);
      }
      if (j < p.n) stv(y + pos * p.out_step, st<Out>(Op::apply(carry, p.inclusive ? inc : exc)));
      carry = Op::apply(carry, total);
    }
  }
}

instantiate_kernel("cumsum_float32", scan_lines, float, float, float, OpSum)
instantiate_kernel("cumsum_float16", scan_lines, half, float, half, OpSum)
instantiate_kernel("cumsum_bfloat16", scan_lines, bf16_t, float, bf16_t, OpSum)
instantiate_kernel("cumsum_int32", scan_lines, int, int, int, OpSum)
instantiate_kernel("cumsum_int64", scan_lines, long, long, long, OpSum)
instantiate_kernel("cumsum_uint8", scan_lines, uchar, uchar, uchar, OpSum)
instantiate_kernel("cumsum_bool", scan_lines, bool, int, int, OpSum)
instantiate_kernel("cumprod_float32", scan_lines, float, float, float, OpProd)
instantiate_kernel("cumprod_float16", scan_lines, half, float, half, OpProd)
instantiate_kernel("cumprod_bfloat16", scan_lines, bf16_t, float, bf16_t, OpProd)
instantiate_kernel("cumprod_int32", scan_lines, int, int, int, OpProd)
instantiate_kernel("cumprod_int64", scan_lines, long, long, long, OpProd)
instantiate_kernel("cumprod_uint8", scan_lines, uchar, uchar, uchar, OpProd)
instantiate_kernel("cumprod_bool", scan_lines, bool, int, int, OpProd)
instantiate_kernel("cummax_float32", scan_lines, float, float, float, OpMax)
instantiate_kernel("cummax_float16", scan_lines, half, float, half, OpMax)
instantiate_kernel("cummax_bfloat16", scan_lines, bf16_t, float, bf16_t, OpMax)
instantiate_kernel("cummax_int32", scan_lines, int, int, int, OpMax)
instantiate_kernel("cummax_int64", scan_lines, long, long, long, OpMax)
instantiate_kernel("cummax_uint8", scan_lines, uchar, uchar, uchar, OpMax)
instantiate_kernel("cummax_bool", scan_lines, bool, uchar, bool, OpMax)
instantiate_kernel("cummin_float32", scan_lines, float, float, float, OpMin)
instantiate_kernel("cummin_float16", scan_lines, half, float, half, OpMin)
instantiate_kernel("cummin_bfloat16", scan_lines, bf16_t, float, bf16_t, OpMin)
instantiate_kernel("cummin_int32", scan_lines, int, int, int, OpMin)
instantiate_kernel("cummin_int64", scan_lines, long, long, long, OpMin)
instantiate_kernel("cummin_uint8", scan_lines, uchar, uchar, uchar, OpMin)
instantiate_kernel("cummin_bool", scan_lines, bool, uchar, bool, OpMin)
instantiate_kernel("cumsum_int8", scan_lines, char, int, char, OpSum)
instantiate_kernel("cumsum_int16", scan_lines, short, int, short, OpSum)
instantiate_kernel("cumsum_uint16", scan_lines, u16_t, uint, u16_t, OpSum)
instantiate_kernel("cumsum_uint32", scan_lines, uint, uint, uint, OpSum)
instantiate_kernel("cumsum_uint64", scan_lines, ulong, ulong, ulong, OpSum)
instantiate_kernel("cumprod_int8", scan_lines, char, int, char, OpProd)
instantiate_kernel("cumprod_int16", scan_lines, short, int, short, OpProd)
instantiate_kernel("cumprod_uint16", scan_lines, u16_t, uint, u16_t, OpProd)
instantiate_kernel("cumprod_uint32", scan_lines, uint, uint, uint, OpProd)
instantiate_kernel("cumprod_uint64", scan_lines, ulong, ulong, ulong, OpProd)
instantiate_kernel("cummax_int8", scan_lines, char, int, char, OpMaxOf<char>)
instantiate_kernel("cummax_int16", scan_lines, short, int, short, OpMaxOf<short>)
instantiate_kernel("cummax_uint16", scan_lines, u16_t, uint, u16_t, OpMax)
instantiate_kernel("cummax_uint32", scan_lines, uint, uint, uint, OpMax)
instantiate_kernel("cummax_uint64", scan_lines, ulong, ulong, ulong, OpMax)
instantiate_kernel("cummin_int8", scan_lines, char, int, char, OpMinOf<char>)
instantiate_kernel("cummin_int16", scan_lines, short, int, short, OpMinOf<short>)
instantiate_kernel("cummin_uint16", scan_lines, u16_t, uint, u16_t, OpMin)
instantiate_kernel("cummin_uint32", scan_lines, uint, uint, uint, OpMin)
instantiate_kernel("cummin_uint64", scan_lines, ulong, ulong, ulong, OpMin)
instantiate_kernel("logcumsumexp_float32", scan_lines, float, float, float, OpLogAddExp)
instantiate_kernel("logcumsumexp_float16", scan_lines, half, float, half, OpLogAddExp)
instantiate_kernel("logcumsumexp_bfloat16", scan_lines, bf16_t, float, bf16_t, OpLogAddExp)
