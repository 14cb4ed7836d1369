// conv_wgrad.metal: the cotangent of a convolution's weight (see
// ConvWeightGrad in conv_wgrad.go), for every parameter of MLX's
// conv_general over 1 to 3 spatial axes widened to 3 by leading axes of
// size 1. Host names, for float32, float16 and bfloat16, which accumulate
// in float: conv_wgrad_<dtype> (all rows in each threadgroup),
// conv_wgrad_part_<dtype> (the rows split in parts, partial sums to
// scratch) and conv_wgrad_sum_<dtype> (the parts added into dw).
// Buffers: [[buffer(0)]] x, [[buffer(1)]] g, [[buffer(2)]] dw,
// [[buffer(3)]] the partial sums (dw again, unused, without parts),
// [[buffer(4)]] WGradParams; for
// conv_wgrad_sum [[buffer(0)]] the partial sums, [[buffer(1)]] dw,
// [[buffer(2)]] WGradParams.

// WGradParams: x is [n, in..., cin], g [n, out..., cout] and dw [cout,
// kern..., cig], each given by its offset from its bound buffer and five
// strides (batch or output channel, three spatial axes, channel). dw of a
// group is the product gᵀ·patches: row j is output channel j of the
// group, column k is kernel position k / cig (row-major over kern, kk of
// them) and input channel k % cig, and the depth runs over the rows (batch
// and output positions, row-major) of g, cut into parts of chunk rows.
struct WGradParams {
  long n, cin, cout, groups, cig, cog, rows, kk, K, flip, parts, chunk;
  long x_off, g_off, w_off;
  long in[3], out[3], kern[3], stride[3], lo[3], kdil[3], idil[3];
  long xs[5], gs[5], ws[5];
};

// wg_row splits row r into its batch index and the position of its
// window's first element on the padded, dilated input, and returns the
// offset of its cotangent element of channel 0.
inline long wg_row(constant WGradParams& p, long r, thread long& n, thread long* base) {
  long o[3];
  for (int a = 2; a >= 0; a--) {
    o[a] = r % p.out[a];
    r /= p.out[a];
  }
  n = r;
  long off = p.g_off + n * p.gs[0];
  for (int a = 0; a < 3; a++) {
    base[a] = o[a] * p.stride[a] - p.lo[a];
    off += o[a] * p.gs[1 + a];
  }
  return off;
}

// wg_kpos splits kernel position kp into its index on each axis.
inline void wg_kpos(constant WGradParams& p, long kp, thread long* k) {
  for (int a = 2; a >= 0; a--) {
    k[a] = kp % p.kern[a];
    kp /= p.kern[a];
  }
}

// wg_x returns the offset in x of channel 0 of the input element that
// kernel position k reads for the window at base of image n, or -1 on
// padding or between the elements of a dilated input.
inline long wg_x(constant WGradParams& p, long n, thread const long* base, thread const long* k) {
  long off = p.x_off + n * p.xs[0];
  for (int a = 0; a < 3; a++) {
    long q = base[a] + k[a] * p.kdil[a];
    if (q < 0 || q % p.idil[a] != 0) return -1;
    q /= p.idil[a];
    if (q >= p.in[a]) return -1;
    off += q * p.xs[1 + a];
  }
  return off;
}

// Tiles: a threadgroup computes a WG_BM x WG_BN block of one group's dw
// (output channels x patch columns) as 256 virtual threads of 4x4
// elements each, stepping through the rows WG_BK at a time with the
// cotangent and patch tiles staged in threadgroup memory; patches are
// read from x by index arithmetic. A pipeline may allow fewer than 256
// threads (plan.FitGroups): the real threads then take the virtual ones
// in passes, each a full sweep of the rows, and every thread reaches
// every barrier of every pass.
#define WG_BM 64
#define WG_BN 64
#define WG_BK 16
#define WG_VT 256

// With PART, threadgroup z = part·groups + group sums only its part's
// rows and writes float partial sums to part[((part·groups + group)·cog
// + j)·K + k], which conv_wgrad_sum adds up; without, z is the group and
// the sums go to dw.
template <typename T, bool PART>
[[kernel, max_total_threads_per_threadgroup(256)]] void conv_wgrad(
    device const T* x [[buffer(0)]], device const T* g [[buffer(1)]], device T* dw [[buffer(2)]],
    device float* part [[buffer(3)]],
    constant WGradParams& p [[buffer(4)]], uint3 tg [[threadgroup_position_in_grid]],
    uint t [[thread_index_in_threadgroup]], uint3 tpg [[threads_per_threadgroup]]) {
  threadgroup float ta[WG_BK][WG_BM];
  threadgroup float tb[WG_BK][WG_BN];
  threadgroup long rn[WG_BK];
  threadgroup long roff[WG_BK];
  threadgroup long rbase[WG_BK][3];
  uint nt = tpg.x;
  long grp = long(tg.z) % p.groups, pt = long(tg.z) / p.groups;
  long rlo = pt * p.chunk, rhi = rlo + p.chunk < p.rows ? rlo + p.chunk : p.rows;
  long j0 = long(tg.y) * WG_BM, k0 = long(tg.x) * WG_BN;
  for (uint v0 = 0; v0 < WG_VT; v0 += nt) {
    uint vt = v0 + t;
    bool active = vt < WG_VT;
    uint ty = vt / 16, tx = vt % 16;
    float acc[4][4];
    for (int i = 0; i < 4; i++) {
      for (int j = 0; j < 4; j++) acc[i][j] = 0.0f;
    }
    for (long r0 = rlo; r0 < rhi; r0 += WG_BK) {
      for (uint i = t; i < WG_BK; i += nt) {
        long r = r0 + i;
        if (r < rhi) {
          long n, base[3];
          roff[i] = wg_row(p, r, n, base);
          rn[i] = n;
          for (int a = 0; a < 3; a++) rbase[i][a] = base[a];
        } else {
          rn[i] = -1;
        }
      }
      threadgroup_barrier(mem_flags::mem_threadgroup);
      for (uint e = t; e < WG_BK * WG_BM; e += nt) {
        uint ri = e / WG_BM, ji = e % WG_BM;
        long j = j0 + ji;
        float v = 0.0f;
        if (rn[ri] >= 0 && j < p.cog) {
          v = float(Elem<T>::load(g[roff[ri] + (grp * p.cog + j) * p.gs[4]]));
        }
        ta[ri][ji] = v;
      }
      for (uint e = t; e < WG_BK * WG_BN; e += nt) {
        uint ri = e / WG_BN, ki = e % WG_BN;
        long k = k0 + ki;
        float v = 0.0f;
        long n = rn[ri];
        if (n >= 0 && k < p.K) {
          long kp[3], base[3];
          wg_kpos(p, k / p.cig, kp);
          for (int a = 0; a < 3; a++) base[a] = rbase[ri][a];
          long off = wg_x(p, n, base, kp);
          if (off >= 0) {
            v = float(Elem<T>::load(x[off + (grp * p.cig + k % p.cig) * p.xs[4]]));
          }
        }
        tb[ri][ki] = v;
      }
      threadgroup_barrier(mem_flags::mem_threadgroup);
      if (active) {
        for (uint r = 0; r < WG_BK; r++) {
          float a[4], b[4];
          for (int i = 0; i < 4; i++) a[i] = ta[r][ty + 16 * i];
          for (int j = 0; j < 4; j++) b[j] = tb[r][tx + 16 * j];
          for (int i = 0; i < 4; i++) {
            for (int j = 0; j < 4; j++) acc[i][j] = fma(a[i], b[j], acc[i][j]);
          }
        }
      }
      threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (active) {
      for (int i = 0; i < 4; i++) {
        long j = j0 + ty + 16 * i;
        if (j >= p.cog) continue;
        long co = grp * p.cog + j;
        for (int jj = 0; jj < 4; jj++) {
          long k = k0 + tx + 16 * jj;
          if (k >= p.K) continue;
          if (PART) {
            part[((pt * p.groups + grp) * p.cog + j) * p.K + k] = acc[i][jj];
            continue;
          }
          long kp[3];
          wg_kpos(p, k / p.cig, kp);
          long off = p.w_off + co * p.ws[0] + (k % p.cig) * p.ws[4];
          for (int a = 0; a < 3; a++) {
            off += (p.flip != 0 ? p.kern[a] - 1 - kp[a] : kp[a]) * p.ws[1 + a];
          }
          dw[off] = Elem<T>::store(acc[i][jj]);
        }
      }
    }
  }
}

// conv_wgrad_sum adds the parts' partial sums of dw[co, k] (gid.x = k,
// gid.y = co) and stores the result, the kernel mirrored under flip.
template <typename T>
kernel void conv_wgrad_sum(device const float* part [[buffer(0)]], device T* dw [[buffer(1)]],
                           constant WGradParams& p [[buffer(2)]], uint2 gid [[thread_position_in_grid]]) {
  long k = gid.x, co = gid.y;
  if (k >= p.K || co >= p.cout) return;
  long grp = co / p.cog, j = co % p.cog;
  float s = 0.0f;
  for (long pt = 0; pt < p.parts; pt++) s += part[((pt * p.groups + grp) * p.cog + j) * p.K + k];
  long kp[3];
  wg_kpos(p, k / p.cig, kp);
  long off = p.w_off + co * p.ws[0] + (k % p.cig) * p.ws[4];
  for (int a = 0; a < 3; a++) {
    off += (p.flip != 0 ? p.kern[a] - 1 - kp[a] : kp[a]) * p.ws[1 + a];
  }
  dw[off] = Elem<T>::store(s);
}

instantiate_kernel("conv_wgrad_float32", conv_wgrad, float, false)
instantiate_kernel("conv_wgrad_float16", conv_wgrad, half, false)
instantiate_kernel("conv_wgrad_bfloat16", conv_wgrad, bf16_t, false)
instantiate_kernel("conv_wgrad_part_float32", conv_wgrad, float, true)
instantiate_kernel("conv_wgrad_part_float16", conv_wgrad, half, true)
instantiate_kernel("conv_wgrad_part_bfloat16", conv_wgrad, bf16_t, true)
instantiate_kernel("conv_wgrad_sum_float32", conv_wgrad_sum, float)
instantiate_kernel("conv_wgrad_sum_float16", conv_wgrad_sum, half)
instantiate_kernel("conv_wgrad_sum_bfloat16", conv_wgrad_sum, bf16_t)
