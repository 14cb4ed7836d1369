// reduce.metal: Sum, Prod, Max, Min, All and Any over any set of axes (see
// Reduce in reduce.go for the plan). Host names:
//   reduce_rows_<op>_<in dtype>_<out dtype>   one fold per simdgroup or threadgroup
//   reduce_cols_<op>_<in dtype>_<out dtype>   one fold per lane, 8 rows splitting it
// Buffers: [[buffer(0)]] in, [[buffer(1)]] out, [[buffer(2)]] ReduceParams.
// Accumulators: float for the float dtypes, the type itself for the 32-
// and 64-bit integers, uchar for Max and Min of uint8 and (0 or 1) for the
// rest of bool, and int or uint for the other 8- and 16-bit integers (the
// simd shuffles take 32-bit words). Sum and Prod of bool, int8 and int16
// give int32, of uint8 and uint16 uint32 (MLX's rule, internal/opset).

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

// ReduceParams describes a reduction of a strided view: outs outputs, each
// folding n elements. The kept dims (kshape, with input strides kin and
// output strides kout) give an output's offsets; the folded dims (rshape,
// rin) give an element's offset within its fold. All counts are in
// elements.
struct ReduceParams {
  long n, outs;
  long parts, chunk;  // rows kernel: each fold split into parts of chunk elements
  long per_simd;      // rows kernel: 1 = one simdgroup per item, 0 = one threadgroup
  long in_off, out_off;
  long nk, nr;
  long kshape[MAXD], kin[MAXD], kout[MAXD];
  long rshape[MAXD], rin[MAXD];
};

inline long fold_offset(long r, constant ReduceParams& p) {
  return p.nr == 1 ? r * p.rin[0] : offset_of(r, p.nr, p.rshape, p.rin);
}

// reduce_rows folds one item (a part of one output's fold) per simdgroup
// or per threadgroup. Lanes read consecutive elements, so it is the
// kernel for folds that are contiguous in memory; the general offset
// arithmetic makes it right for every layout. With parts > 1 it writes
// partial results to out as [outs, parts] row-major (a scratch buffer).
// The plans (lineGrid in reduce.go) launch 256 threads per threadgroup, or
// 1024 for lines longer than 8192: the kernel declares that maximum, so
// Metal compiles it to fit 1024 threads however many registers it needs.
template <typename In, typename Acc, typename Out, typename Op>
[[kernel, max_total_threads_per_threadgroup(1024)]] void reduce_rows(
    device const In* in [[buffer(0)]], device Out* out [[buffer(1)]],
    constant ReduceParams& p [[buffer(2)]],
    uint tg [[threadgroup_position_in_grid]], uint ntg [[threadgroups_per_grid]],
    uint lid [[thread_index_in_threadgroup]], uint tpg [[threads_per_threadgroup]],
    uint sg [[simdgroup_index_in_threadgroup]], uint nsg [[simdgroups_per_threadgroup]],
    uint lane [[thread_index_in_simdgroup]]) {
  threadgroup Acc part[32];
  long items = p.outs * p.parts;
  long first = p.per_simd ? long(tg) * nsg + sg : long(tg);
  long stride = p.per_simd ? long(ntg) * nsg : long(ntg);
  long width = p.per_simd ? 32 : long(tpg);
  long me = p.per_simd ? long(lane) : long(lid);
  // A threadgroup's items depend only on tg, so in per-threadgroup mode
  // every thread runs the loop equally often and the barriers are uniform.
  for (long it = first; it < items; it += stride) {
    long o = it / p.parts, q = it % p.parts;
    long lo = q * p.chunk, hi = min64(p.n, lo + p.chunk);
    Acc acc = Op::template init<Acc>();
    device const In* base = in + p.in_off + offset_of(o, p.nk, p.kshape, p.kin);
    if (p.nr == 1 && p.rin[0] == 1) {
      for (long r = lo + me; r < hi; r += width) acc = Op::apply(acc, Op::template load<Acc>(elem_read(base + r)));
    } else {
      for (long r = lo + me; r < hi; r += width) acc = Op::apply(acc, Op::template load<Acc>(elem_read(base + fold_offset(r, p))));
    }
    acc = Op::simd(acc);
    if (!p.per_simd) {
      if (lane == 0) part[sg] = acc;
      threadgroup_barrier(mem_flags::mem_threadgroup);
      acc = lane < nsg ? part[lane] : Op::template init<Acc>();
      acc = Op::simd(acc);
      threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (me == 0) {
      long dst = p.parts > 1 ? it : p.out_off + offset_of(o, p.nk, p.kshape, p.kout);
      elem_write(out + dst, st<Out>(acc));
    }
  }
}

// reduce_cols gives each thread of a 32-wide row of the threadgroup its
// own output, so neighbouring lanes read neighbouring memory when the
// kept dims are the contiguous ones (a column sum of a row-major matrix);
// the threadgroup's 8 rows split each fold and are combined through
// threadgroup memory.
// The plan launches 32x8 threadgroups, which the kernel's layout assumes.
template <typename In, typename Acc, typename Out, typename Op>
[[kernel, max_total_threads_per_threadgroup(256)]] void reduce_cols(
    device const In* in [[buffer(0)]], device Out* out [[buffer(1)]],
    constant ReduceParams& p [[buffer(2)]],
    uint2 tg [[threadgroup_position_in_grid]], uint2 lid [[thread_position_in_threadgroup]]) {
  threadgroup Acc acc_tg[8][32];
  long o = long(tg.x) * 32 + lid.x;
  Acc acc = Op::template init<Acc>();
  if (o < p.outs) {
    device const In* base = in + p.in_off + offset_of(o, p.nk, p.kshape, p.kin);
    for (long r = lid.y; r < p.n; r += 8) acc = Op::apply(acc, Op::template load<Acc>(elem_read(base + fold_offset(r, p))));
  }
  acc_tg[lid.y][lid.x] = acc;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lid.y == 0 && o < p.outs) {
    for (uint y = 1; y < 8; y++) acc = Op::apply(acc, acc_tg[y][lid.x]);
    elem_write(out + p.out_off + offset_of(o, p.nk, p.kshape, p.kout), st<Out>(acc));
  }
}

instantiate_kernel("reduce_rows_sum_float32_float32", reduce_rows, float, float, float, OpSum)
instantiate_kernel("reduce_rows_sum_float16_float16", reduce_rows, half, float, half, OpSum)
instantiate_kernel("reduce_rows_sum_bfloat16_bfloat16", reduce_rows, bf16_t, float, bf16_t, OpSum)
instantiate_kernel("reduce_rows_sum_int32_int32", reduce_rows, int, int, int, OpSum)
instantiate_kernel("reduce_rows_sum_int64_int64", reduce_rows, long, long, long, OpSum)
instantiate_kernel("reduce_rows_sum_bool_int32", reduce_rows, bool, int, int, OpSum)
instantiate_kernel("reduce_rows_sum_float16_float32", reduce_rows, half, float, float, OpSum)
instantiate_kernel("reduce_rows_sum_float32_float16", reduce_rows, float, float, half, OpSum)
instantiate_kernel("reduce_rows_sum_bfloat16_float32", reduce_rows, bf16_t, float, float, OpSum)
instantiate_kernel("reduce_rows_sum_float32_bfloat16", reduce_rows, float, float, bf16_t, OpSum)
instantiate_kernel("reduce_rows_prod_float32_float32", reduce_rows, float, float, float, OpProd)
instantiate_kernel("reduce_rows_prod_float16_float16", reduce_rows, half, float, half, OpProd)
instantiate_kernel("reduce_rows_prod_bfloat16_bfloat16", reduce_rows, bf16_t, float, bf16_t, OpProd)
instantiate_kernel("reduce_rows_prod_int32_int32", reduce_rows, int, int, int, OpProd)
instantiate_kernel("reduce_rows_prod_int64_int64", reduce_rows, long, long, long, OpProd)
instantiate_kernel("reduce_rows_prod_bool_int32", reduce_rows, bool, int, int, OpProd)
instantiate_kernel("reduce_rows_prod_float16_float32", reduce_rows, half, float, float, OpProd)
instantiate_kernel("reduce_rows_prod_float32_float16", reduce_rows, float, float, half, OpProd)
instantiate_kernel("reduce_rows_prod_bfloat16_float32", reduce_rows, bf16_t, float, float, OpProd)
instantiate_kernel("reduce_rows_prod_float32_bfloat16", reduce_rows, float, float, bf16_t, OpProd)
instantiate_kernel("reduce_rows_max_float32_float32", reduce_rows, float, float, float, OpMax)
instantiate_kernel("reduce_rows_max_float16_float16", reduce_rows, half, float, half, OpMax)
instantiate_kernel("reduce_rows_max_bfloat16_bfloat16", reduce_rows, bf16_t, float, bf16_t, OpMax)
instantiate_kernel("reduce_rows_max_int32_int32", reduce_rows, int, int, int, OpMax)
instantiate_kernel("reduce_rows_max_int64_int64", reduce_rows, long, long, long, OpMax)
instantiate_kernel("reduce_rows_max_uint8_uint8", reduce_rows, uchar, uchar, uchar, OpMax)
instantiate_kernel("reduce_rows_max_bool_bool", reduce_rows, bool, uchar, bool, OpMax)
instantiate_kernel("reduce_rows_max_float16_float32", reduce_rows, half, float, float, OpMax)
instantiate_kernel("reduce_rows_max_float32_float16", reduce_rows, float, float, half, OpMax)
instantiate_kernel("reduce_rows_max_bfloat16_float32", reduce_rows, bf16_t, float, float, OpMax)
instantiate_kernel("reduce_rows_max_float32_bfloat16", reduce_rows, float, float, bf16_t, OpMax)
instantiate_kernel("reduce_rows_min_float32_float32", reduce_rows, float, float, float, OpMin)
instantiate_kernel("reduce_rows_min_float16_float16", reduce_rows, half, float, half, OpMin)
instantiate_kernel("reduce_rows_min_bfloat16_bfloat16", reduce_rows, bf16_t, float, bf16_t, OpMin)
instantiate_kernel("reduce_rows_min_int32_int32", reduce_rows, int, int, int, OpMin)
instantiate_kernel("reduce_rows_min_int64_int64", reduce_rows, long, long, long, OpMin)
instantiate_kernel("reduce_rows_min_uint8_uint8", reduce_rows, uchar, uchar, uchar, OpMin)
instantiate_kernel("reduce_rows_min_bool_bool", reduce_rows, bool, uchar, bool, OpMin)
instantiate_kernel("reduce_rows_min_float16_float32", reduce_rows, half, float, float, OpMin)
instantiate_kernel("reduce_rows_min_float32_float16", reduce_rows, float, float, half, OpMin)
instantiate_kernel("reduce_rows_min_bfloat16_float32", reduce_rows, bf16_t, float, float, OpMin)
instantiate_kernel("reduce_rows_min_float32_bfloat16", reduce_rows, float, float, bf16_t, OpMin)
instantiate_kernel("reduce_rows_all_float32_bool", reduce_rows, float, uchar, bool, OpAll)
instantiate_kernel("reduce_rows_all_float16_bool", reduce_rows, half, uchar, bool, OpAll)
instantiate_kernel("reduce_rows_all_bfloat16_bool", reduce_rows, bf16_t, uchar, bool, OpAll)
instantiate_kernel("reduce_rows_all_int32_bool", reduce_rows, int, uchar, bool, OpAll)
instantiate_kernel("reduce_rows_all_int64_bool", reduce_rows, long, uchar, bool, OpAll)
instantiate_kernel("reduce_rows_all_uint8_bool", reduce_rows, uchar, uchar, bool, OpAll)
instantiate_kernel("reduce_rows_all_bool_bool", reduce_rows, bool, uchar, bool, OpAll)
instantiate_kernel("reduce_rows_any_float32_bool", reduce_rows, float, uchar, bool, OpAny)
instantiate_kernel("reduce_rows_any_float16_bool", reduce_rows, half, uchar, bool, OpAny)
instantiate_kernel("reduce_rows_any_bfloat16_bool", reduce_rows, bf16_t, uchar, bool, OpAny)
instantiate_kernel("reduce_rows_any_int32_bool", reduce_rows, int, uchar, bool, OpAny)
instantiate_kernel("reduce_rows_any_int64_bool", reduce_rows, long, uchar, bool, OpAny)
instantiate_kernel("reduce_rows_any_uint8_bool", reduce_rows, uchar, uchar, bool, OpAny)
instantiate_kernel("reduce_rows_any_bool_bool", reduce_rows, bool, uchar, bool, OpAny)
instantiate_kernel("reduce_cols_sum_float32_float32", reduce_cols, float, float, float, OpSum)
instantiate_kernel("reduce_cols_sum_float16_float16", reduce_cols, half, float, half, OpSum)
instantiate_kernel("reduce_cols_sum_bfloat16_bfloat16", reduce_cols, bf16_t, float, bf16_t, OpSum)
instantiate_kernel("reduce_cols_sum_int32_int32", reduce_cols, int, int, int, OpSum)
instantiate_kernel("reduce_cols_sum_int64_int64", reduce_cols, long, long, long, OpSum)
instantiate_kernel("reduce_cols_sum_bool_int32", reduce_cols, bool, int, int, OpSum)
instantiate_kernel("reduce_cols_prod_float32_float32", reduce_cols, float, float, float, OpProd)
instantiate_kernel("reduce_cols_prod_float16_float16", reduce_cols, half, float, half, OpProd)
instantiate_kernel("reduce_cols_prod_bfloat16_bfloat16", reduce_cols, bf16_t, float, bf16_t, OpProd)
instantiate_kernel("reduce_cols_prod_int32_int32", reduce_cols, int, int, int, OpProd)
instantiate_kernel("reduce_cols_prod_int64_int64", reduce_cols, long, long, long, OpProd)
instantiate_kernel("reduce_cols_prod_bool_int32", reduce_cols, bool, int, int, OpProd)
instantiate_kernel("reduce_cols_max_float32_float32", reduce_cols, float, float, float, OpMax)
instantiate_kernel("reduce_cols_max_float16_float16", reduce_cols, half, float, half, OpMax)
instantiate_kernel("reduce_cols_max_bfloat16_bfloat16", reduce_cols, bf16_t, float, bf16_t, OpMax)
instantiate_kernel("reduce_cols_max_int32_int32", reduce_cols, int, int, int, OpMax)
instantiate_kernel("reduce_cols_max_int64_int64", reduce_cols, long, long, long, OpMax)
instantiate_kernel("reduce_cols_max_uint8_uint8", reduce_cols, uchar, uchar, uchar, OpMax)
instantiate_kernel("reduce_cols_max_bool_bool", reduce_cols, bool, uchar, bool, OpMax)
instantiate_kernel("reduce_cols_min_float32_float32", reduce_cols, float, float, float, OpMin)
instantiate_kernel("reduce_cols_min_float16_float16", reduce_cols, half, float, half, OpMin)
instantiate_kernel("reduce_cols_min_bfloat16_bfloat16", reduce_cols, bf16_t, float, bf16_t, OpMin)
instantiate_kernel("reduce_cols_min_int32_int32", reduce_cols, int, int, int, OpMin)
instantiate_kernel("reduce_cols_min_int64_int64", reduce_cols, long, long, long, OpMin)
instantiate_kernel("reduce_cols_min_uint8_uint8", reduce_cols, uchar, uchar, uchar, OpMin)
instantiate_kernel("reduce_cols_min_bool_bool", reduce_cols, bool, uchar, bool, OpMin)
instantiate_kernel("reduce_cols_all_float32_bool", reduce_cols, float, uchar, bool, OpAll)
instantiate_kernel("reduce_cols_all_float16_bool", reduce_cols, half, uchar, bool, OpAll)
instantiate_kernel("reduce_cols_all_bfloat16_bool", reduce_cols, bf16_t, uchar, bool, OpAll)
instantiate_kernel("reduce_cols_all_int32_bool", reduce_cols, int, uchar, bool, OpAll)
instantiate_kernel("reduce_cols_all_int64_bool", reduce_cols, long, uchar, bool, OpAll)
instantiate_kernel("reduce_cols_all_uint8_bool", reduce_cols, uchar, uchar, bool, OpAll)
instantiate_kernel("reduce_cols_all_bool_bool", reduce_cols, bool, uchar, bool, OpAll)
instantiate_kernel("reduce_cols_any_float32_bool", reduce_cols, float, uchar, bool, OpAny)
instantiate_kernel("reduce_cols_any_float16_bool", reduce_cols, half, uchar, bool, OpAny)
instantiate_kernel("reduce_cols_any_bfloat16_bool", reduce_cols, bf16_t, uchar, bool, OpAny)
instantiate_kernel("reduce_cols_any_int32_bool", reduce_cols, int, uchar, bool, OpAny)
instantiate_kernel("reduce_cols_any_int64_bool", reduce_cols, long, uchar, bool, OpAny)
instantiate_kernel("reduce_cols_any_uint8_bool", reduce_cols, uchar, uchar, bool, OpAny)
instantiate_kernel("reduce_cols_any_bool_bool", reduce_cols, bool, uchar, bool, OpAny)
instantiate_kernel("reduce_rows_sum_int8_int32", reduce_rows, char, int, int, OpSum)
instantiate_kernel("reduce_rows_sum_int16_int32", reduce_rows, short, int, int, OpSum)
instantiate_kernel("reduce_rows_sum_uint16_uint32", reduce_rows, u16_t, uint, uint, OpSum)
instantiate_kernel("reduce_rows_sum_uint32_uint32", reduce_rows, uint, uint, uint, OpSum)
instantiate_kernel("reduce_rows_sum_uint64_uint64", reduce_rows, ulong, ulong, ulong, OpSum)
instantiate_kernel("reduce_rows_sum_uint8_uint32", reduce_rows, uchar, uint, uint, OpSum)
instantiate_kernel("reduce_rows_prod_int8_int32", reduce_rows, char, int, int, OpProd)
instantiate_kernel("reduce_rows_prod_int16_int32", reduce_rows, short, int, int, OpProd)
instantiate_kernel("reduce_rows_prod_uint16_uint32", reduce_rows, u16_t, uint, uint, OpProd)
instantiate_kernel("reduce_rows_prod_uint32_uint32", reduce_rows, uint, uint, uint, OpProd)
instantiate_kernel("reduce_rows_prod_uint64_uint64", reduce_rows, ulong, ulong, ulong, OpProd)
instantiate_kernel("reduce_rows_prod_uint8_uint32", reduce_rows, uchar, uint, uint, OpProd)
instantiate_kernel("reduce_rows_max_int8_int8", reduce_rows, char, int, char, OpMax)
instantiate_kernel("reduce_rows_max_int16_int16", reduce_rows, short, int, short, OpMax)
instantiate_kernel("reduce_rows_max_uint16_uint16", reduce_rows, u16_t, uint, u16_t, OpMax)
instantiate_kernel("reduce_rows_max_uint32_uint32", reduce_rows, uint, uint, uint, OpMax)
instantiate_kernel("reduce_rows_max_uint64_uint64", reduce_rows, ulong, ulong, ulong, OpMax)
instantiate_kernel("reduce_rows_min_int8_int8", reduce_rows, char, int, char, OpMin)
instantiate_kernel("reduce_rows_min_int16_int16", reduce_rows, short, int, short, OpMin)
instantiate_kernel("reduce_rows_min_uint16_uint16", reduce_rows, u16_t, uint, u16_t, OpMin)
instantiate_kernel("reduce_rows_min_uint32_uint32", reduce_rows, uint, uint, uint, OpMin)
instantiate_kernel("reduce_rows_min_uint64_uint64", reduce_rows, ulong, ulong, ulong, OpMin)
instantiate_kernel("reduce_rows_all_int8_bool", reduce_rows, char, uchar, bool, OpAll)
instantiate_kernel("reduce_rows_all_int16_bool", reduce_rows, short, uchar, bool, OpAll)
instantiate_kernel("reduce_rows_all_uint16_bool", reduce_rows, u16_t, uchar, bool, OpAll)
instantiate_kernel("reduce_rows_all_uint32_bool", reduce_rows, uint, uchar, bool, OpAll)
instantiate_kernel("reduce_rows_all_uint64_bool", reduce_rows, ulong, uchar, bool, OpAll)
instantiate_kernel("reduce_rows_any_int8_bool", reduce_rows, char, uchar, bool, OpAny)
instantiate_kernel("reduce_rows_any_int16_bool", reduce_rows, short, uchar, bool, OpAny)
instantiate_kernel("reduce_rows_any_uint16_bool", reduce_rows, u16_t, uchar, bool, OpAny)
instantiate_kernel("reduce_rows_any_uint32_bool", reduce_rows, uint, uchar, bool, OpAny)
instantiate_kernel("reduce_rows_any_uint64_bool", reduce_rows, ulong, uchar, bool, OpAny)
instantiate_kernel("reduce_cols_sum_int8_int32", reduce_cols, char, int, int, OpSum)
instantiate_kernel("reduce_cols_sum_int16_int32", reduce_cols, short, int, int, OpSum)
instantiate_kernel("reduce_cols_sum_uint16_uint32", reduce_cols, u16_t, uint, uint, OpSum)
instantiate_kernel("reduce_cols_sum_uint32_uint32", reduce_cols, uint, uint, uint, OpSum)
instantiate_kernel("reduce_cols_sum_uint64_uint64", reduce_cols, ulong, ulong, ulong, OpSum)
instantiate_kernel("reduce_cols_sum_uint8_uint32", reduce_cols, uchar, uint, uint, OpSum)
instantiate_kernel("reduce_cols_prod_int8_int32", reduce_cols, char, int, int, OpProd)
instantiate_kernel("reduce_cols_prod_int16_int32", reduce_cols, short, int, int, OpProd)
instantiate_kernel("reduce_cols_prod_uint16_uint32", reduce_cols, u16_t, uint, uint, OpProd)
instantiate_kernel("reduce_cols_prod_uint32_uint32", reduce_cols, uint, uint, uint, OpProd)
instantiate_kernel("reduce_cols_prod_uint64_uint64", reduce_cols, ulong, ulong, ulong, OpProd)
instantiate_kernel("reduce_cols_prod_uint8_uint32", reduce_cols, uchar, uint, uint, OpProd)
instantiate_kernel("reduce_cols_max_int8_int8", reduce_cols, char, int, char, OpMax)
instantiate_kernel("reduce_cols_max_int16_int16", reduce_cols, short, int, short, OpMax)
instantiate_kernel("reduce_cols_max_uint16_uint16", reduce_cols, u16_t, uint, u16_t, OpMax)
instantiate_kernel("reduce_cols_max_uint32_uint32", reduce_cols, uint, uint, uint, OpMax)
instantiate_kernel("reduce_cols_max_uint64_uint64", reduce_cols, ulong, ulong, ulong, OpMax)
instantiate_kernel("reduce_cols_min_int8_int8", reduce_cols, char, int, char, OpMin)
instantiate_kernel("reduce_cols_min_int16_int16", reduce_cols, short, int, short, OpMin)
instantiate_kernel("reduce_cols_min_uint16_uint16", reduce_cols, u16_t, uint, u16_t, OpMin)
instantiate_kernel("reduce_cols_min_uint32_uint32", reduce_cols, uint, uint, uint, OpMin)
instantiate_kernel("reduce_cols_min_uint64_uint64", reduce_cols, ulong, ulong, ulong, OpMin)
instantiate_kernel("reduce_cols_all_int8_bool", reduce_cols, char, uchar, bool, OpAll)
instantiate_kernel("reduce_cols_all_int16_bool", reduce_cols, short, uchar, bool, OpAll)
instantiate_kernel("reduce_cols_all_uint16_bool", reduce_cols, u16_t, uchar, bool, OpAll)
instantiate_kernel("reduce_cols_all_uint32_bool", reduce_cols, uint, uchar, bool, OpAll)
instantiate_kernel("reduce_cols_all_uint64_bool", reduce_cols, ulong, uchar, bool, OpAll)
instantiate_kernel("reduce_cols_any_int8_bool", reduce_cols, char, uchar, bool, OpAny)
instantiate_kernel("reduce_cols_any_int16_bool", reduce_cols, short, uchar, bool, OpAny)
instantiate_kernel("reduce_cols_any_uint16_bool", reduce_cols, u16_t, uchar, bool, OpAny)
instantiate_kernel("reduce_cols_any_uint32_bool", reduce_cols, uint, uchar, bool, OpAny)
instantiate_kernel("reduce_cols_any_uint64_bool", reduce_cols, ulong, uchar, bool, OpAny)
