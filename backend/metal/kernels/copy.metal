// copy.metal: out = in converted to out's dtype (numpy astype rules, see
// To in common.h). Host names: copy_<in dtype>_<out dtype>_<variant>, dtypes
// named as array.DType prints them (float32, bfloat16, complex64, ...).
//
// Buffers (all variants): [[buffer(0)]] in, [[buffer(1)]] out,
// [[buffer(2)]] constant long* p.
//   contig:  p[0] = n. in and out are contiguous; thread i copies element i.
//            Grid (n, 1, 1), or (X, ceil(n/X), 1) for n >= 2^32.
//   scalar:  p[0] = n. in is one element broadcast to the contiguous out.
//   strided: the strided layout of common.h with operands 0 = in, 1 = out.
//            Grid (shape[nd-1], shape[nd-2], rest).

template <typename S, typename D>
[[kernel]] void copy_contig(
    device const S* in [[buffer(0)]],
    device D* out [[buffer(1)]],
    constant long* p [[buffer(2)]],
    uint2 gid [[thread_position_in_grid]],
    uint2 gsz [[threads_per_grid]]) {
  ulong i = linear_index(gid, gsz);
  if (i >= ulong(p[0])) {
    return;
  }
  elem_write(out + i, convert<S, D>(elem_read(in + i)));
}

template <typename S, typename D>
[[kernel]] void copy_scalar(
    device const S* in [[buffer(0)]],
    device D* out [[buffer(1)]],
    constant long* p [[buffer(2)]],
    uint2 gid [[thread_position_in_grid]],
    uint2 gsz [[threads_per_grid]]) {
  ulong i = linear_index(gid, gsz);
  if (i >= ulong(p[0])) {
    return;
  }
  elem_write(out + i, convert<S, D>(elem_read(in)));
}

template <typename S, typename D>
[[kernel]] void copy_strided(
    device const S* in [[buffer(0)]],
    device D* out [[buffer(1)]],
    constant long* p [[buffer(2)]],
    uint3 gid [[thread_position_in_grid]]) {
  elem_write(out + strided_offset(p, 1, gid), convert<S, D>(elem_read(in + strided_offset(p, 0, gid))));
}

#define instantiate_copy(sname, S, dname, D)                                         \
  instantiate_kernel("copy_" sname "_" dname "_contig", copy_contig, S, D)           \
  instantiate_kernel("copy_" sname "_" dname "_scalar", copy_scalar, S, D)           \
  instantiate_kernel("copy_" sname "_" dname "_strided", copy_strided, S, D)

#define instantiate_copy_from(sname, S)            \
  instantiate_copy(sname, S, "bool", bool)         \
  instantiate_copy(sname, S, "uint8", uchar)       \
  instantiate_copy(sname, S, "int32", int)         \
  instantiate_copy(sname, S, "int64", long)        \
  instantiate_copy(sname, S, "int8", char)         \
  instantiate_copy(sname, S, "int16", short)       \
  instantiate_copy(sname, S, "uint16", u16_t)      \
  instantiate_copy(sname, S, "uint32", uint)       \
  instantiate_copy(sname, S, "uint64", ulong)      \
  instantiate_copy(sname, S, "float16", half)      \
  instantiate_copy(sname, S, "bfloat16", bf16_t)   \
  instantiate_copy(sname, S, "float32", float)     \
  instantiate_copy(sname, S, "complex64", float2)

instantiate_copy_from("bool", bool)
instantiate_copy_from("uint8", uchar)
instantiate_copy_from("int32", int)
instantiate_copy_from("int64", long)
instantiate_copy_from("int8", char)
instantiate_copy_from("int16", short)
instantiate_copy_from("uint16", u16_t)
instantiate_copy_from("uint32", uint)
instantiate_copy_from("uint64", ulong)
instantiate_copy_from("float16", half)
instantiate_copy_from("bfloat16", bf16_t)
instantiate_copy_from("float32", float)
instantiate_copy_from("complex64", float2)
