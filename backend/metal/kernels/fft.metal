// fft.metal: complex64 FFTs along lines (see fft.go). Host names:
// fft_complex64_<cap> for cap 512 and 2048, the elements a threadgroup
// holds (the smaller takes a quarter of the memory, so that more
// threadgroups of short lines share a core).
// Buffers: [[buffer(0)]] in (float2), [[buffer(1)]] out (float2; may be
// the same memory as in when every threadgroup reads exactly the
// elements it writes), [[buffer(2)]] FFTParams.
//
// Each threadgroup loads a few lines of length n (at most CAP elements
// in all) into threadgroup memory, runs one self-sorting
// Stockham pass per radix (2, 3, 4, 5, 7 or 8) between the two halves of
// that memory, and stores the lines back, optionally multiplied by the
// twiddles of a four-step transform. Lines are addressed as
//   off + (g / G)·A + (g % G)·B + i·S
// for line g and element i, which covers a batch of rows, the columns of
// a four-step transform's first pass and the strided rows of its second.

#define FFT_MAXPASS 12

struct FFTParams {
  long n, lines, per_group, sign, npass;
  long radix[FFT_MAXPASS];
  long in_off, in_g, in_a, in_b, in_s, in_cols;
  long out_off, out_g, out_a, out_b, out_s, out_cols;
  long tw_n;
};

// cos and sin of 2π·m/R for the odd radices, m = 0 .. R-1.
constant float fft_cos3[3] = {1.0f, -0.5f, -0.5f};
constant float fft_sin3[3] = {0.0f, 0.866025403784438647f, -0.866025403784438647f};
constant float fft_cos5[5] = {1.0f, 0.309016994374947424f, -0.809016994374947424f, -0.809016994374947424f,
                              0.309016994374947424f};
constant float fft_sin5[5] = {0.0f, 0.951056516295153572f, 0.587785252292473129f, -0.587785252292473129f,
                              -0.951056516295153572f};
constant float fft_cos7[7] = {1.0f, 0.623489801858733531f, -0.222520933956314404f, -0.900968867902419126f,
                              -0.900968867902419126f, -0.222520933956314404f, 0.623489801858733531f};
constant float fft_sin7[7] = {0.0f, 0.781831482468029809f, 0.974927912181823607f, 0.433883739117558120f,
                              -0.433883739117558120f, -0.974927912181823607f, -0.781831482468029809f};

// fft_twiddle returns exp(sign·2πi·m/n) for 0 <= m < n <= 2^22. The
// angle is reduced to a quarter turn in integers first, so that the float
// argument of cospi and sinpi stays below 1/2 and the twiddle is accurate
// to a few ulps even for the long lines of a four-step transform.
inline float2 fft_twiddle(uint m, uint n, float sign) {
  uint q = (4 * m) / n;
  uint r = 4 * m - q * n;
  float x = 0.5f * (float(r) / float(n));
  float c = cospi(x), s = sinpi(x);
  float2 w;
  switch (q) {
    case 0: w = float2(c, s); break;
    case 1: w = float2(-s, c); break;
    case 2: w = float2(-c, -s); break;
    default: w = float2(s, -c); break;
  }
  return float2(w.x, sign * w.y);
}

// sign·i·z.
inline float2 fft_rot(float2 z, float sign) { return float2(-sign * z.y, sign * z.x); }

inline void fft_dft2(thread float2* v) {
  float2 a = v[0], b = v[1];
  v[0] = a + b;
  v[1] = a - b;
}

inline void fft_dft4(thread float2* v, float sign) {
  float2 s02 = v[0] + v[2], d02 = v[0] - v[2];
  float2 s13 = v[1] + v[3], d13 = fft_rot(v[1] - v[3], sign);
  v[0] = s02 + s13;
  v[2] = s02 - s13;
  v[1] = d02 + d13;
  v[3] = d02 - d13;
}

// Radix 8 as two radix-4 DFTs (even and odd elements) joined by the
// eighth roots of unity.
inline void fft_dft8(thread float2* v, float sign) {
  float2 e[4] = {v[0], v[2], v[4], v[6]};
  float2 o[4] = {v[1], v[3], v[5], v[7]};
  fft_dft4(e, sign);
  fft_dft4(o, sign);
  const float h = 0.707106781186547524f;
  float2 o1 = float2(h * (o[1].x - sign * o[1].y), h * (o[1].y + sign * o[1].x));
  float2 o2 = fft_rot(o[2], sign);
  float2 o3 = float2(-h * (o[3].x + sign * o[3].y), h * (sign * o[3].x - o[3].y));
  v[0] = e[0] + o[0];
  v[4] = e[0] - o[0];
  v[1] = e[1] + o1;
  v[5] = e[1] - o1;
  v[2] = e[2] + o2;
  v[6] = e[2] - o2;
  v[3] = e[3] + o3;
  v[7] = e[3] - o3;
}

// An odd radix R by pairs: with a_t = v_t + v_{R-t} and b_t = v_t - v_{R-t},
// X_k = v_0 + Σ a_t·cos(2πtk/R) + sign·i·Σ b_t·sin(2πtk/R), and X_{R-k}
// the same with -i: half the multiplications of the direct sum.
template <int R>
inline void fft_dft_odd(thread float2* v, float sign, constant float* cs, constant float* sn) {
  float2 x[R];
  float2 sum = v[0];
  for (int t = 1; t < R; t++) sum += v[t];
  x[0] = sum;
  for (int k = 1; k <= R / 2; k++) {
    float2 a = v[0], b = float2(0.0f, 0.0f);
    for (int t = 1; t <= R / 2; t++) {
      int m = (t * k) % R;
      a += (v[t] + v[R - t]) * cs[m];
      b += (v[t] - v[R - t]) * sn[m];
    }
    float2 ib = fft_rot(b, sign);
    x[k] = a + ib;
    x[R - k] = a - ib;
  }
  for (int t = 0; t < R; t++) v[t] = x[t];
}

// FFTDft<R>::run is the DFT of radix R in place, by specialisation so
// that each radix sees only its own R elements.
template <int R>
struct FFTDft;
template <>
struct FFTDft<2> {
  static void run(thread float2* v, float) { fft_dft2(v); }
};
template <>
struct FFTDft<3> {
  static void run(thread float2* v, float sign) { fft_dft_odd<3>(v, sign, fft_cos3, fft_sin3); }
};
template <>
struct FFTDft<4> {
  static void run(thread float2* v, float sign) { fft_dft4(v, sign); }
};
template <>
struct FFTDft<5> {
  static void run(thread float2* v, float sign) { fft_dft_odd<5>(v, sign, fft_cos5, fft_sin5); }
};
template <>
struct FFTDft<7> {
  static void run(thread float2* v, float sign) { fft_dft_odd<7>(v, sign, fft_cos7, fft_sin7); }
};
template <>
struct FFTDft<8> {
  static void run(thread float2* v, float sign) { fft_dft8(v, sign); }
};

// fft_radix twiddles and transforms the R elements of one butterfly of
// a Stockham pass (see FFT_PASS), k its index within the sub-transforms
// of length stride·R.
template <int R>
inline void fft_radix(thread float2* v, uint k, uint stride, float sign) {
  if (k != 0) {
    for (uint t = 1; t < R; t++) v[t] = complex_mul(v[t], fft_twiddle(t * k, stride * R, sign));
  }
  FFTDft<R>::run(v, sign);
}

// FFT_PASS is one Stockham pass of radix R over the L lines of n elements
// at buf[src ...], writing buf[dst ...], after passes whose radices
// multiply to stride: butterfly j reads elements j + t·n/R, and writes
// its R results stride apart in their sorted place, so no bit-reversal
// pass is needed. (A macro, not a function: the harness cannot pass
// threadgroup pointers.)
#define FFT_PASS(R)                                                  \
  for (uint u = lid; u < L * (n / R); u += tpg) {                    \
    uint m = n / R, l = u / m, j = u % m, k = j % stride;            \
    float2 v[R];                                                     \
    for (uint t = 0; t < R; t++) v[t] = buf[src + l * n + j + t * m]; \
    fft_radix<R>(v, k, stride, sign);                                \
    uint d = dst + l * n + (j - k) * R + k;                          \
    for (uint t = 0; t < R; t++) buf[d + t * stride] = v[t];         \
  }

// fft_lines: threadgroup tg takes groups of per_group consecutive lines
// tg, tg + ntg, ... The load and store orders walk along whichever
// of a line and the lines is contiguous in memory (in_cols, out_cols: the
// lines), so that neighbouring threads touch neighbouring elements.
// Indices inside a group are 32-bit (it holds at most CAP elements,
// and g, the lines' period, is at most 2048): only a group's first line
// takes a 64-bit division. The barriers depend only on the group and the
// parameters, so every thread of a threadgroup reaches each one.
template <typename T, uint CAP>
[[kernel, max_total_threads_per_threadgroup(256)]] void fft_lines(
    device const T* in [[buffer(0)]], device T* out [[buffer(1)]], constant FFTParams& p [[buffer(2)]],
    uint tg [[threadgroup_position_in_grid]], uint ntg [[threadgroups_per_grid]],
    uint lid [[thread_index_in_threadgroup]], uint tpg [[threads_per_threadgroup]]) {
  threadgroup float2 buf[2 * CAP];
  uint n = uint(p.n), ing = uint(p.in_g), outg = uint(p.out_g), twn = uint(p.tw_n);
  float sign = float(p.sign);
  long groups = (p.lines + p.per_group - 1) / p.per_group;
  for (long grp = tg; grp < groups; grp += ntg) {
    long g0 = grp * p.per_group;
    uint L = uint(min64(p.per_group, p.lines - g0));
    long iq = g0 / ing, oq = g0 / outg;
    uint ir = uint(g0 - iq * ing), orr = uint(g0 - oq * outg);
    for (uint e = lid; e < L * n; e += tpg) {
      uint l = p.in_cols ? e % L : e / n;
      uint i = p.in_cols ? e / L : e % n;
      uint w = ir + l;
      buf[l * n + i] = in[p.in_off + (iq + w / ing) * p.in_a + long(w % ing) * p.in_b + long(i) * p.in_s];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    uint cur = 0, stride = 1;
    for (long s = 0; s < p.npass; s++) {
      uint r = uint(p.radix[s]);
      uint src = cur * CAP, dst = (1 - cur) * CAP;
      switch (r) {
        case 2: FFT_PASS(2) break;
        case 3: FFT_PASS(3) break;
        case 4: FFT_PASS(4) break;
        case 5: FFT_PASS(5) break;
        case 7: FFT_PASS(7) break;
        default: FFT_PASS(8) break;
      }
      threadgroup_barrier(mem_flags::mem_threadgroup);
      cur = 1 - cur;
      stride *= r;
    }
    uint res = cur * CAP;
    for (uint e = lid; e < L * n; e += tpg) {
      uint l = p.out_cols ? e % L : e / n;
      uint i = p.out_cols ? e / L : e % n;
      uint w = orr + l;
      float2 v = buf[res + l * n + i];
      if (twn > 0) {
        v = complex_mul(v, fft_twiddle(((w % outg) * i) % twn, twn, sign));
      }
      out[p.out_off + (oq + w / outg) * p.out_a + long(w % outg) * p.out_b + long(i) * p.out_s] = v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
}

instantiate_kernel("fft_complex64_512", fft_lines, float2, 512)
instantiate_kernel("fft_complex64_2048", fft_lines, float2, 2048)
