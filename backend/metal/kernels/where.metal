// where.metal: out = cond ? x : y elementwise. The selection only moves
// bits, so kernels exist per element size: where_<b8|b16|b32|b64>_<variant>
// (storage uchar, ushort, uint, ulong).
//
// Buffers (both variants): [[buffer(0)]] cond (bool), [[buffer(1)]] x,
// [[buffer(2)]] y, [[buffer(3)]] out, [[buffer(4)]] constant long* p.
//   contig:  p[0] = n; every operand contiguous. Grid (n, 1, 1), or
//            (X, ceil(n/X), 1) for n >= 2^32.
//   strided: the strided layout of common.h, operands 0 = cond, 1 = x,
//            2 = y, 3 = out. Grid (shape[nd-1], shape[nd-2], rest).

template <typename T>
[[kernel]] void where_contig(
    device const bool* cond [[buffer(0)]],
    device const T* x [[buffer(1)]],
    device const T* y [[buffer(2)]],
    device T* out [[buffer(3)]],
    constant long* p [[buffer(4)]],
    uint2 gid [[thread_position_in_grid]],
    uint2 gsz [[threads_per_grid]]) {
  ulong i = linear_index(gid, gsz);
  if (i >= ulong(p[0])) {
    return;
  }
  out[i] = cond[i] ? x[i] : y[i];
}

template <typename T>
[[kernel]] void where_strided(
    device const bool* cond [[buffer(0)]],
    device const T* x [[buffer(1)]],
    device const T* y [[buffer(2)]],
    device T* out [[buffer(3)]],
    constant long* p [[buffer(4)]],
    uint3 gid [[thread_position_in_grid]]) {
  bool c = cond[strided_offset(p, 0, gid)];
  out[strided_offset(p, 3, gid)] = c ? x[strided_offset(p, 1, gid)] : y[strided_offset(p, 2, gid)];
}

#define instantiate_where(bits, T)                                   \
  instantiate_kernel("where_" bits "_contig", where_contig, T)     \
  instantiate_kernel("where_" bits "_strided", where_strided, T)

instantiate_where("b8", uchar)
instantiate_where("b16", ushort)
instantiate_where("b32", uint)
instantiate_where("b64", ulong)
