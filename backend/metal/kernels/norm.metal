// norm.metal: LayerNorm and RMSNorm over the last axis (see norm.go), as
// backend/cpu's norm.go computes them. Host names: layer_norm_<dtype> and
// rms_norm_<dtype> for float32, float16 and bfloat16 (computed in float,
// rounded once on store).
// Buffers: [[buffer(0)]] x, [[buffer(1)]] weight, [[buffer(2)]] bias (x
// again where there is none), [[buffer(3)]] out (row-major),
// [[buffer(4)]] NormParams.

// NormParams: rows of n elements; the rows' index splits over the shape
// lead[0..nl) (row-major), x's strides on those axes are xl, along a row
// xs. w and b have strides ws and bs (has_w, has_b say whether they are
// there). eps is a float's bits.
struct NormParams {
  long n, rows, nl;
  long lead[8], xl[8];
  long x_off, xs, has_w, w_off, ws, has_b, b_off, bs, eps_bits;
};

// norm_row_offset is the offset of row r in x.
inline long norm_row_offset(long r, constant NormParams& p) {
  long off = 0;
  for (long d = p.nl - 1; d >= 0; d--) {
    off += (r % p.lead[d]) * p.xl[d];
    r /= p.lead[d];
  }
  return off;
}

// NORM_SUM adds v over the threadgroup through part, leaving the total in
// every thread's v (a macro: the harness cannot pass threadgroup memory
// to a function). Its uses depend only on the row, so every thread
// reaches the barriers.
#define NORM_SUM(v)                                       \
  do {                                                    \
    v = simd_sum(v);                                      \
    if (lane == 0) part[sg] = v;                          \
    threadgroup_barrier(mem_flags::mem_threadgroup);      \
    v = simd_sum(lane < nsg ? part[lane] : 0.0f);         \
    threadgroup_barrier(mem_flags::mem_threadgroup);      \
  } while (0)

// norm_rows: a threadgroup a row (rows tg, tg + ntg, ...), in three passes
// over it: the mean (LayerNorm only), the mean square of the centred
// values, the results.
template <typename T, int RMS>
[[kernel, max_total_threads_per_threadgroup(1024)]] void norm_rows(
    device const T* x [[buffer(0)]], device const T* w [[buffer(1)]], device const T* b [[buffer(2)]],
    device T* out [[buffer(3)]], constant NormParams& p [[buffer(4)]],
    uint tg [[threadgroup_position_in_grid]], uint ntg [[threadgroups_per_grid]],
    uint lid [[thread_index_in_threadgroup]], uint tpg [[threads_per_threadgroup]],
    uint sg [[simdgroup_index_in_threadgroup]], uint nsg [[simdgroups_per_threadgroup]],
    uint lane [[thread_index_in_simdgroup]]) {
  threadgroup float part[32];
  float eps = as_type<float>(uint(p.eps_bits));
  long n = p.n;
  for (long r = tg; r < p.rows; r += ntg) {
    device const T* xr = x + p.x_off + norm_row_offset(r, p);
    float mean = 0.0f;
    if (!RMS) {
      float s = 0.0f;
      for (long i = lid; i < n; i += tpg) s += float(Elem<T>::load(xr[i * p.xs]));
      NORM_SUM(s);
      mean = s / float(n);
    }
    float q = 0.0f;
    for (long i = lid; i < n; i += tpg) {
      float v = float(Elem<T>::load(xr[i * p.xs])) - mean;
      q += v * v;
    }
    NORM_SUM(q);
    float inv = 1.0f / sqrt(q / float(n) + eps);
    device T* o = out + r * n;
    for (long i = lid; i < n; i += tpg) {
      float v = (float(Elem<T>::load(xr[i * p.xs])) - mean) * inv;
      if (p.has_w) v *= float(Elem<T>::load(w[p.w_off + i * p.ws]));
      if (p.has_b) v += float(Elem<T>::load(b[p.b_off + i * p.bs]));
      o[i] = Elem<T>::store(typename Elem<T>::compute(v));
    }
  }
}

instantiate_kernel("layer_norm_float32", norm_rows, float, 0)
instantiate_kernel("layer_norm_float16", norm_rows, half, 0)
instantiate_kernel("layer_norm_bfloat16", norm_rows, bf16_t, 0)
instantiate_kernel("rms_norm_float32", norm_rows, float, 1)
instantiate_kernel("rms_norm_float16", norm_rows, half, 1)
instantiate_kernel("rms_norm_bfloat16", norm_rows, bf16_t, 1)
