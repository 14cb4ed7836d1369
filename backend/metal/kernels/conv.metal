// conv.metal: channels-last convolutions (see Conv in conv.go), MLX's
// conv_general: strides, per-side padding (negative crops), kernel and
// input dilation, groups and a mirrored kernel, over 1 to 3 spatial axes
// widened to 3 by leading axes of size 1. Host names: conv_gemm_<dtype>
// (implicit GEMM, threadgroup tiles) and conv_direct_<dtype> (a thread
// per output, for groups with few output channels: depthwise) for
// float32, float16 and bfloat16, which accumulate in float.
// Buffers: [[buffer(0)]] x, [[buffer(1)]] w, [[buffer(2)]] out,
// [[buffer(3)]] ConvParams.

// ConvParams: x is [n, in..., cin], w [cout, kern..., cig] and out
// [n, out..., cout], each given by its offset from its bound buffer and
// five strides (batch or output channel, three spatial axes, channel).
// Row m of the product is output position m of out in row-major order
// (rows of them); column k is kernel position k / cig (row-major over
// kern, kk of them) and input channel k % cig of the group.
struct ConvParams {
  long n, cin, cout, groups, cig, cog, rows, kk, K, flip;
  long x_off, w_off, o_off;
  long in[3], out[3], kern[3], stride[3], lo[3], kdil[3], idil[3];
  long xs[5], ws[5], os[5];
};

// conv_row splits output row m into its batch index and the position of
// its window's first element on the padded, dilated input (o·stride -
// lo per axis), and returns the offset of its output element of
// channel 0. Rows below 2^32 (all of conv_direct's, a grid index) split
// in 32-bit arithmetic, several times faster than 64-bit division.
inline long conv_row(constant ConvParams& p, long m, thread long& n, thread int* base) {
  long o[3];
  if (m <= 0xffffffffL) {
    uint r = uint(m);
    for (int a = 2; a >= 0; a--) {
      uint s = uint(p.out[a]);
      o[a] = r % s;
      r /= s;
    }
    n = r;
  } else {
    for (int a = 2; a >= 0; a--) {
      o[a] = m % p.out[a];
      m /= p.out[a];
    }
    n = m;
  }
  long off = p.o_off + n * p.os[0];
  for (int a = 0; a < 3; a++) {
    base[a] = int(o[a] * p.stride[a] - p.lo[a]);
    off += o[a] * p.os[1 + a];
  }
  return off;
}

// conv_tap sets off to the offset in x, from the start of an image's
// channel 0, of the input element at dilated kernel offset kq from the
// window at base, and reports whether there is one: it may fall on
// padding or between the elements of a dilated input. Positions fit int:
// the host checks the shapes.
inline bool conv_tap(constant ConvParams& p, thread const int* base, thread const int* kq, thread long& off) {
  off = 0;
  for (int a = 0; a < 3; a++) {
    int q = base[a] + kq[a];
    int d = int(p.idil[a]);
    if (q < 0) return false;
    if (d != 1) {
      if (q % d != 0) return false;
      q /= d;
    }
    if (q >= int(p.in[a])) return false;
    off += long(q) * p.xs[1 + a];
  }
  return true;
}

// conv_kpos splits kernel position kp into its dilated offsets on each
// axis and returns the offset in w of that position (mirrored on every
// axis under flip) from output channel 0, input channel 0.
inline long conv_kpos(constant ConvParams& p, int kp, thread int* kq) {
  long woff = 0;
  for (int a = 2; a >= 0; a--) {
    int ka = int(p.kern[a]);
    int k = kp % ka;
    kp /= ka;
    kq[a] = k * int(p.kdil[a]);
    woff += long(p.flip != 0 ? ka - 1 - k : k) * p.ws[1 + a];
  }
  return woff;
}

// Implicit GEMM tiles: a threadgroup computes a CV_BM x CV_BN block of one
// group's output (rows x output channels) as 256 virtual threads of 4x4
// outputs each, stepping through K CV_BK at a time with the patch and
// weight tiles staged in threadgroup memory. The patch tile is read from
// x by index arithmetic (no im2col buffer). Divisions are kept off the
// loads: the rows' window positions are worked out once per block, and
// the CV_BK columns' kernel offsets once per step of K, into threadgroup
// tables. A pipeline may allow fewer than 256 threads (plan.FitGroups):
// the real threads then take the virtual ones in passes, each pass a
// full sweep of K, and every thread reaches every barrier of every pass.
#define CV_BM 64
#define CV_BN 64
#define CV_BK 16
#define CV_VT 256

template <typename T>
[[kernel]] void conv_gemm(
    device const T* x [[buffer(0)]], device const T* w [[buffer(1)]], device T* out [[buffer(2)]],
    constant ConvParams& p [[buffer(3)]], uint3 tg [[threadgroup_position_in_grid]],
    uint t [[thread_index_in_threadgroup]], uint3 tpg [[threads_per_threadgroup]]) {
  // A padding column keeps the stores of a simdgroup, which walk down
  // a column (ki fastest), off a single memory bank.
  threadgroup float ta[CV_BK][CV_BM + 1];
  threadgroup float tb[CV_BK][CV_BN + 1];
  threadgroup long xrow[CV_BM];   // offset of the row's image in x
  threadgroup long orow[CV_BM];   // offset of the row's output element of channel 0
  threadgroup int rbase[CV_BM][3];
  threadgroup int kq[CV_BK][3];   // the column's dilated kernel offsets
  threadgroup long kx[CV_BK];     // its input channel's offset in x
  threadgroup long kw[CV_BK];     // its offset in w from the output channel
  uint nt = tpg.x;
  long g = tg.z;
  long m0 = long(tg.y) * CV_BM, n0 = long(tg.x) * CV_BN;
  long wg = (g * p.cog + n0) * p.ws[0];
  for (uint i = t; i < CV_BM; i += nt) {
    long m = m0 + i;
    if (m < p.rows) {
      long n;
      int base[3];
      orow[i] = conv_row(p, m, n, base) + g * p.cog * p.os[4];
      xrow[i] = p.x_off + n * p.xs[0];
      for (int a = 0; a < 3; a++) rbase[i][a] = base[a];
    }
  }
  for (uint v0 = 0; v0 < CV_VT; v0 += nt) {
    uint vt = v0 + t;
    bool active = vt < CV_VT;
    uint ty = vt / 16, tx = vt % 16;
    float acc[4][4];
    for (int i = 0; i < 4; i++) {
      for (int j = 0; j < 4; j++) acc[i][j] = 0.0f;
    }
    for (long k0 = 0; k0 < p.K; k0 += CV_BK) {
      for (uint ki = t; ki < CV_BK; ki += nt) {
        long k = k0 + ki;
        if (k < p.K) {
          int c = int(k % p.cig), q[3];
          kw[ki] = conv_kpos(p, int(k / p.cig), q) + c * p.ws[4];
          kx[ki] = (g * p.cig + c) * p.xs[4];
          for (int a = 0; a < 3; a++) kq[ki][a] = q[a];
        }
      }
      threadgroup_barrier(mem_flags::mem_threadgroup);
      for (uint e = t; e < CV_BM * CV_BK; e += nt) {
        uint mi = e / CV_BK, ki = e % CV_BK;
        float v = 0.0f;
        if (m0 + mi < p.rows && k0 + ki < p.K) {
          int base[3] = {rbase[mi][0], rbase[mi][1], rbase[mi][2]};
          int q[3] = {kq[ki][0], kq[ki][1], kq[ki][2]};
          long off;
          if (conv_tap(p, base, q, off)) v = float(Elem<T>::load(x[xrow[mi] + off + kx[ki]]));
        }
        ta[ki][mi] = v;
      }
      for (uint e = t; e < CV_BK * CV_BN; e += nt) {
        uint ni = e / CV_BK, ki = e % CV_BK;
        float v = 0.0f;
        if (k0 + ki < p.K && n0 + ni < p.cog) v = float(Elem<T>::load(w[p.w_off + wg + ni * p.ws[0] + kw[ki]]));
        tb[ki][ni] = v;
      }
      threadgroup_barrier(mem_flags::mem_threadgroup);
      if (active) {
        for (uint k = 0; k < CV_BK; k++) {
          float a[4], b[4];
          for (int i = 0; i < 4; i++) a[i] = ta[k][ty + 16 * i];
          for (int j = 0; j < 4; j++) b[j] = tb[k][tx + 16 * j];
          for (int i = 0; i < 4; i++) {
            for (int j = 0; j < 4; j++) acc[i][j] = fma(a[i], b[j], acc[i][j]);
          }
        }
      }
      threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (active) {
      for (int i = 0; i < 4; i++) {
        uint mi = ty + 16 * i;
        if (m0 + mi >= p.rows) continue;
        for (int j = 0; j < 4; j++) {
          long c = n0 + tx + 16 * j;
          if (c < p.cog) out[orow[mi] + c * p.os[4]] = Elem<T>::store(acc[i][j]);
        }
      }
    }
  }
}

// conv_direct computes out[m, co] (gid.x = co, gid.y = m) in one thread:
// the sum over kernel positions and the group's input channels, in the
// GEMM's order of K.
template <typename T>
kernel void conv_direct(device const T* x [[buffer(0)]], device const T* w [[buffer(1)]], device T* out [[buffer(2)]],
                        constant ConvParams& p [[buffer(3)]], uint2 gid [[thread_position_in_grid]]) {
  long co = gid.x, m = gid.y;
  if (co >= p.cout || m >= p.rows) return;
  long n;
  int base[3];
  long ooff = conv_row(p, m, n, base);
  long xb = p.x_off + n * p.xs[0] + (co / p.cog) * p.cig * p.xs[4], wb = p.w_off + co * p.ws[0];
  int cig = int(p.cig);
  float acc = 0.0f;
  for (int kp = 0; kp < int(p.kk); kp++) {
    int q[3];
    long wo = conv_kpos(p, kp, q);
    long xo;
    if (!conv_tap(p, base, q, xo)) continue;
    for (int ci = 0; ci < cig; ci++) {
      acc = fma(float(Elem<T>::load(x[xb + xo + ci * p.xs[4]])), float(Elem<T>::load(w[wb + wo + ci * p.ws[4]])), acc);
    }
  }
  out[ooff + co * p.os[4]] = Elem<T>::store(acc);
}

instantiate_kernel("conv_gemm_float32", conv_gemm, float)
instantiate_kernel("conv_gemm_float16", conv_gemm, half)
instantiate_kernel("conv_gemm_bfloat16", conv_gemm, bf16_t)
instantiate_kernel("conv_direct_float32", conv_direct, float)
instantiate_kernel("conv_direct_float16", conv_direct, half)
instantiate_kernel("conv_direct_bfloat16", conv_direct, bf16_t)
