// binary.metal: out = op(a, b) elementwise, op one of the functors of
// common.h (named like package ops). Host names:
// binary_<Op>_<operand dtype>_<variant>; out's dtype is
// metal.BinaryResult(op, operand dtype).
//
// Buffers (all variants): [[buffer(0)]] a, [[buffer(1)]] b,
// [[buffer(2)]] out, [[buffer(3)]] constant long* p.
//   vv:      p[0] = n; a, b and out contiguous.
//   sv:      p[0] = n; a is one element broadcast, b and out contiguous.
//   vs:      p[0] = n; b is one element broadcast, a and out contiguous.
//            Grid (n, 1, 1), or (X, ceil(n/X), 1) for n >= 2^32.
//   strided: the strided layout of common.h, operands 0 = a, 1 = b,
//            2 = out. Grid (shape[nd-1], shape[nd-2], rest).

template <typename T, typename U, typename Op>
[[kernel]] void binary_vv(
    device const T* a [[buffer(0)]],
    device const T* b [[buffer(1)]],
    device U* out [[buffer(2)]],
    constant long* p [[buffer(3)]],
    uint2 gid [[thread_position_in_grid]],
    uint2 gsz [[threads_per_grid]]) {
  ulong i = linear_index(gid, gsz);
  if (i >= ulong(p[0])) {
    return;
  }
  elem_write(out + i, Elem<U>::store(Op()(Elem<T>::load(elem_read(a + i)), Elem<T>::load(elem_read(b + i)))));
}

template <typename T, typename U, typename Op>
[[kernel]] void binary_sv(
    device const T* a [[buffer(0)]],
    device const T* b [[buffer(1)]],
    device U* out [[buffer(2)]],
    constant long* p [[buffer(3)]],
    uint2 gid [[thread_position_in_grid]],
    uint2 gsz [[threads_per_grid]]) {
  ulong i = linear_index(gid, gsz);
  if (i >= ulong(p[0])) {
    return;
  }
  elem_write(out + i, Elem<U>::store(Op()(Elem<T>::load(elem_read(a)), Elem<T>::load(elem_read(b + i)))));
}

template <typename T, typename U, typename Op>
[[kernel]] void binary_vs(
    device const T* a [[buffer(0)]],
    device const T* b [[buffer(1)]],
    device U* out [[buffer(2)]],
    constant long* p [[buffer(3)]],
    uint2 gid [[thread_position_in_grid]],
    uint2 gsz [[threads_per_grid]]) {
  ulong i = linear_index(gid, gsz);
  if (i >= ulong(p[0])) {
    return;
  }
  elem_write(out + i, Elem<U>::store(Op()(Elem<T>::load(elem_read(a + i)), Elem<T>::load(elem_read(b)))));
}

template <typename T, typename U, typename Op>
[[kernel]] void binary_strided(
    device const T* a [[buffer(0)]],
    device const T* b [[buffer(1)]],
    device U* out [[buffer(2)]],
    constant long* p [[buffer(3)]],
    uint3 gid [[thread_position_in_grid]]) {
  T x = elem_read(a + strided_offset(p, 0, gid));
  T y = elem_read(b + strided_offset(p, 1, gid));
  elem_write(out + strided_offset(p, 2, gid), Elem<U>::store(Op()(Elem<T>::load(x), Elem<T>::load(y))));
}

#define instantiate_binary(op, tname, T, U)                                       \
  instantiate_kernel("binary_" #op "_" tname "_vv", binary_vv, T, U, op)          \
  instantiate_kernel("binary_" #op "_" tname "_sv", binary_sv, T, U, op)          \
  instantiate_kernel("binary_" #op "_" tname "_vs", binary_vs, T, U, op)          \
  instantiate_kernel("binary_" #op "_" tname "_strided", binary_strided, T, U, op)

#define instantiate_binary_float(op)              \
  instantiate_binary(op, "float32", float, float) \
  instantiate_binary(op, "float16", half, half)   \
  instantiate_binary(op, "bfloat16", bf16_t, bf16_t)

#define instantiate_binary_int(op)               \
  instantiate_binary(op, "uint8", uchar, uchar)   \
  instantiate_binary(op, "int32", int, int)       \
  instantiate_binary(op, "int64", long, long)     \
  instantiate_binary(op, "int8", char, char)      \
  instantiate_binary(op, "int16", short, short)   \
  instantiate_binary(op, "uint16", u16_t, u16_t)  \
  instantiate_binary(op, "uint32", uint, uint)    \
  instantiate_binary(op, "uint64", ulong, ulong)

#define instantiate_binary_real(op) \
  instantiate_binary_float(op)      \
  instantiate_binary_int(op)

#define instantiate_compare(op)                         \
  instantiate_binary(op, "float32", float, bool)        \
  instantiate_binary(op, "float16", half, bool)         \
  instantiate_binary(op, "bfloat16", bf16_t, bool)      \
  instantiate_binary(op, "uint8", uchar, bool)          \
  instantiate_binary(op, "int32", int, bool)            \
  instantiate_binary(op, "int64", long, bool)           \
  instantiate_binary(op, "int8", char, bool)            \
  instantiate_binary(op, "int16", short, bool)          \
  instantiate_binary(op, "uint16", u16_t, bool)         \
  instantiate_binary(op, "uint32", uint, bool)          \
  instantiate_binary(op, "uint64", ulong, bool)         \
  instantiate_binary(op, "bool", bool, bool)

instantiate_binary_real(Add)
instantiate_binary(Add, "bool", bool, bool)
instantiate_binary(Add, "complex64", float2, float2)
instantiate_binary_real(Sub)
instantiate_binary(Sub, "complex64", float2, float2)
instantiate_binary_real(Mul)
instantiate_binary(Mul, "bool", bool, bool)
instantiate_binary(Mul, "complex64", float2, float2)
instantiate_binary_float(Div)
instantiate_binary(Div, "complex64", float2, float2)
instantiate_binary_real(FloorDivide)
instantiate_binary_real(Remainder)
instantiate_binary_real(Pow)
instantiate_binary_real(Maximum)
instantiate_binary(Maximum, "bool", bool, bool)
instantiate_binary_real(Minimum)
instantiate_binary(Minimum, "bool", bool, bool)
instantiate_compare(Equal)
instantiate_binary(Equal, "complex64", float2, bool)
instantiate_compare(NotEqual)
instantiate_binary(NotEqual, "complex64", float2, bool)
instantiate_compare(Less)
instantiate_compare(LessEqual)
instantiate_compare(Greater)
instantiate_compare(GreaterEqual)
instantiate_binary(LogicalAnd, "bool", bool, bool)
instantiate_binary(LogicalOr, "bool", bool, bool)
instantiate_binary_float(LogAddExp)
instantiate_binary_float(ArcTan2)
instantiate_binary_float(Hypot)
instantiate_binary_int(BitwiseAnd)
instantiate_binary(BitwiseAnd, "bool", bool, bool)
instantiate_binary_int(BitwiseOr)
instantiate_binary(BitwiseOr, "bool", bool, bool)
instantiate_binary_int(BitwiseXor)
instantiate_binary(BitwiseXor, "bool", bool, bool)
instantiate_binary_int(LeftShift)
instantiate_binary_int(RightShift)
