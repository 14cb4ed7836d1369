// create.metal: kernels that write an output without reading an input.
// Scalar parameters come first in p; the index layout follows them.
//
// fill_<b8|b16|b32|b64>_<variant>: every element = the bits p[0] (the
//   value already converted to the dtype by the host; storage uchar, ushort,
//   uint, ulong). Buffers: [[buffer(0)]] out, [[buffer(1)]] constant long* p.
//   contig:  p[1] = n; out contiguous. Grid (n, 1, 1), or (X, ceil(n/X), 1).
//   strided: p + 1 is the strided layout of common.h, operand 0 = out.
//
// arange_<dtype>_<variant>: element i in row-major order = start + i*step.
//   p[0] = 1: p[1], p[2] are start and step as integers (exact int64
//   arithmetic, then converted); p[0] = 0: they are float32 bits and the
//   value is fma(i, step, start) in float32. Buffers: [[buffer(0)]] out,
//   [[buffer(1)]] constant long* p.
//   contig:  p[3] = n. strided: p + 3 is the strided layout, operand 0 = out.
//
// eye_<b8|b16|b32|b64>_strided: out[r, c] = (c - r == k) ? one : 0. p[0] =
//   the bits of one in the dtype, p[1] = k, p + 2 = the strided layout of
//   the 2-D out (nd = 2, not collapsed). Grid (cols, rows, 1).
//   Buffers: [[buffer(0)]] out, [[buffer(1)]] constant long* p.

template <typename T>
[[kernel]] void fill_contig(
    device T* out [[buffer(0)]],
    constant long* p [[buffer(1)]],
    uint2 gid [[thread_position_in_grid]],
    uint2 gsz [[threads_per_grid]]) {
  ulong i = linear_index(gid, gsz);
  if (i >= ulong(p[1])) {
    return;
  }
  out[i] = T(p[0]);
}

template <typename T>
[[kernel]] void fill_strided(
    device T* out [[buffer(0)]],
    constant long* p [[buffer(1)]],
    uint3 gid [[thread_position_in_grid]]) {
  out[strided_offset(p + 1, 0, gid)] = T(p[0]);
}

template <typename T>
inline T arange_value(constant long* p, ulong i) {
  typedef typename Elem<T>::compute C;
  if (p[0] != 0) {
    long v = wrap_add(p[1], wrap_mul(long(i), p[2]));
    return Elem<T>::store(To<C>::conv(v));
  }
  float start = as_type<float>(uint(p[1]));
  float step = as_type<float>(uint(p[2]));
  return Elem<T>::store(To<C>::conv(fma(float(i), step, start)));
}

template <typename T>
[[kernel]] void arange_contig(
    device T* out [[buffer(0)]],
    constant long* p [[buffer(1)]],
    uint2 gid [[thread_position_in_grid]],
    uint2 gsz [[threads_per_grid]]) {
  ulong i = linear_index(gid, gsz);
  if (i >= ulong(p[3])) {
    return;
  }
  elem_write(out + i, arange_value<T>(p, i));
}

template <typename T>
[[kernel]] void arange_strided(
    device T* out [[buffer(0)]],
    constant long* p [[buffer(1)]],
    uint3 gid [[thread_position_in_grid]]) {
  constant long* q = p + 3;
  int nd = int(q[0]);
  // Row-major position of the element: z walks the leading dimensions in
  // order, so (z, y, x) is its index in the collapsed shape.
  ulong i = gid.x;
  if (nd > 1) {
    i += ulong(q[nd]) * (ulong(gid.y) + ulong(q[nd - 1]) * ulong(gid.z));
  }
  elem_write(out + strided_offset(q, 0, gid), arange_value<T>(p, i));
}

template <typename T>
[[kernel]] void eye_strided(
    device T* out [[buffer(0)]],
    constant long* p [[buffer(1)]],
    uint3 gid [[thread_position_in_grid]]) {
  out[strided_offset(p + 2, 0, gid)] = (long(gid.x) - long(gid.y) == p[1]) ? T(p[0]) : T(0);
}

#define instantiate_bits(bits, T)                                  \
  instantiate_kernel("fill_" bits "_contig", fill_contig, T)       \
  instantiate_kernel("fill_" bits "_strided", fill_strided, T)     \
  instantiate_kernel("eye_" bits "_strided", eye_strided, T)

instantiate_bits("b8", uchar)
instantiate_bits("b16", ushort)
instantiate_bits("b32", uint)
instantiate_bits("b64", ulong)

#define instantiate_arange(tname, T)                                  \
  instantiate_kernel("arange_" tname "_contig", arange_contig, T)     \
  instantiate_kernel("arange_" tname "_strided", arange_strided, T)

instantiate_arange("bool", bool)
instantiate_arange("uint8", uchar)
instantiate_arange("int32", int)
instantiate_arange("int64", long)
instantiate_arange("int8", char)
instantiate_arange("int16", short)
instantiate_arange("uint16", u16_t)
instantiate_arange("uint32", uint)
instantiate_arange("uint64", ulong)
instantiate_arange("float16", half)
instantiate_arange("bfloat16", bf16_t)
instantiate_arange("float32", float)
instantiate_arange("complex64", float2)
