// unary.metal: out = op(x) elementwise, op one of the functors of common.h
// (named like package ops). Host names: unary_<Op>_<x dtype>_<variant>;
// out's dtype is metal.UnaryResult(op, x dtype).
//
// Buffers (both variants): [[buffer(0)]] x, [[buffer(1)]] out,
// [[buffer(2)]] constant long* p.
//   contig:  p[0] = n; x and out contiguous. Grid (n, 1, 1), or
//            (X, ceil(n/X), 1) for n >= 2^32.
//   strided: the strided layout of common.h, operands 0 = x, 1 = out
//            (x may broadcast). Grid (shape[nd-1], shape[nd-2], rest).

template <typename T, typename U, typename Op>
[[kernel]] void unary_contig(
    device const T* x [[buffer(0)]],
    device U* out [[buffer(1)]],
    constant long* p [[buffer(2)]],
    uint2 gid [[thread_position_in_grid]],
    uint2 gsz [[threads_per_grid]]) {
  ulong i = linear_index(gid, gsz);
  if (i >= ulong(p[0])) {
    return;
  }
  elem_write(out + i, Elem<U>::store(Op()(Elem<T>::load(elem_read(x + i)))));
}

template <typename T, typename U, typename Op>
[[kernel]] void unary_strided(
    device const T* x [[buffer(0)]],
    device U* out [[buffer(1)]],
    constant long* p [[buffer(2)]],
    uint3 gid [[thread_position_in_grid]]) {
  elem_write(out + strided_offset(p, 1, gid), Elem<U>::store(Op()(Elem<T>::load(elem_read(x + strided_offset(p, 0, gid))))));
}

#define instantiate_unary(op, tname, T, U)                                           \
  instantiate_kernel("unary_" #op "_" tname "_contig", unary_contig, T, U, op)     \
  instantiate_kernel("unary_" #op "_" tname "_strided", unary_strided, T, U, op)

// Every operation on the three float types.
#define instantiate_unary_float(op)              \
  instantiate_unary(op, "float32", float, float) \
  instantiate_unary(op, "float16", half, half)   \
  instantiate_unary(op, "bfloat16", bf16_t, bf16_t)

// Operations that keep an integer dtype (every integer dtype), and the
// predicates (to bool).
#define instantiate_unary_int(op)               \
  instantiate_unary(op, "uint8", uchar, uchar)  \
  instantiate_unary(op, "int32", int, int)      \
  instantiate_unary(op, "int64", long, long)    \
  instantiate_unary(op, "int8", char, char)     \
  instantiate_unary(op, "int16", short, short)  \
  instantiate_unary(op, "uint16", u16_t, u16_t) \
  instantiate_unary(op, "uint32", uint, uint)   \
  instantiate_unary(op, "uint64", ulong, ulong)

#define instantiate_unary_same(op)              \
  instantiate_unary_float(op)                   \
  instantiate_unary_int(op)                     \
  instantiate_unary(op, "bool", bool, bool)

#define instantiate_unary_predicate(op)                         \
  instantiate_unary(op, "float32", float, bool)                 \
  instantiate_unary(op, "float16", half, bool)                  \
  instantiate_unary(op, "bfloat16", bf16_t, bool)               \
  instantiate_unary(op, "uint8", uchar, bool)                   \
  instantiate_unary(op, "int32", int, bool)                     \
  instantiate_unary(op, "int64", long, bool)                    \
  instantiate_unary(op, "int8", char, bool)                     \
  instantiate_unary(op, "int16", short, bool)                   \
  instantiate_unary(op, "uint16", u16_t, bool)                  \
  instantiate_unary(op, "uint32", uint, bool)                   \
  instantiate_unary(op, "uint64", ulong, bool)                  \
  instantiate_unary(op, "bool", bool, bool)                     \
  instantiate_unary(op, "complex64", float2, bool)

instantiate_unary_float(Neg)
instantiate_unary_int(Neg)
instantiate_unary(Neg, "complex64", float2, float2)
instantiate_unary_same(Abs)
instantiate_unary(Abs, "complex64", float2, float)
instantiate_unary_same(Sign)
instantiate_unary_same(Square)
instantiate_unary(Square, "complex64", float2, float2)
instantiate_unary_same(Floor)
instantiate_unary_same(Ceil)
instantiate_unary_same(Round)
instantiate_unary_same(Trunc)
instantiate_unary_int(Invert)
instantiate_unary(Invert, "bool", bool, bool)
instantiate_unary(Conj, "complex64", float2, float2)
instantiate_unary(Real, "complex64", float2, float)
instantiate_unary(Imag, "complex64", float2, float)
instantiate_unary_float(Angle)
instantiate_unary(Angle, "complex64", float2, float)
instantiate_unary_predicate(LogicalNot)
instantiate_unary_predicate(IsNaN)
instantiate_unary_predicate(IsInf)
instantiate_unary_float(Exp)
instantiate_unary(Exp, "complex64", float2, float2)
instantiate_unary_float(Expm1)
instantiate_unary_float(Log)
instantiate_unary(Log, "complex64", float2, float2)
instantiate_unary_float(Log1p)
instantiate_unary_float(Log2)
instantiate_unary(Log2, "complex64", float2, float2)
instantiate_unary_float(Sqrt)
instantiate_unary(Sqrt, "complex64", float2, float2)
instantiate_unary_float(Rsqrt)
instantiate_unary(Rsqrt, "complex64", float2, float2)
instantiate_unary_float(Reciprocal)
instantiate_unary(Reciprocal, "complex64", float2, float2)
instantiate_unary_float(Sin)
instantiate_unary_float(Cos)
instantiate_unary_float(Tan)
instantiate_unary_float(ArcSin)
instantiate_unary_float(ArcCos)
instantiate_unary_float(ArcTan)
instantiate_unary_float(ArcSinh)
instantiate_unary_float(ArcCosh)
instantiate_unary_float(ArcTanh)
instantiate_unary_float(Log10)
instantiate_unary_float(Sinh)
instantiate_unary_float(Cosh)
instantiate_unary_float(Tanh)
instantiate_unary_float(Sigmoid)
instantiate_unary_float(Erf)
instantiate_unary_float(ErfInv)
