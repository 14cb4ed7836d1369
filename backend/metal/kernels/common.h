// common.h: the prelude of every fathom MSL library. kernels.go prepends it
// to each kernels/*.metal file, and fused.go to each generated library, so a
// library is one self-contained source for newLibraryWithSource: (Metal
// cannot #include project files).
//
// Conventions every kernel follows:
//  * Kernels are templates made visible with instantiate_kernel("host name",
//    template, args...). A plain (non-template) kernel function must be
//    followed by register_kernel(name). The CPU harness lists exactly these
//    names, and TestEveryKernelHasACase checks that some case plans each.
//  * Element types in device memory: bool, char (int8), uchar (uint8),
//    short (int16), u16_t (uint16), int (int32), uint (uint32), long (int64),
//    ulong (uint64), half (float16), bf16_t (bfloat16, stored as a ushort
//    holding the high half of a float32: MSL's bfloat needs Metal 3.1, and
//    this works everywhere), float (float32), float2 (complex64: real,
//    imaginary). ushort is reserved for bfloat16, so uint16 is stored as the
//    struct u16_t and computes as ushort.
//  * Elem<T>::load converts storage to the compute type (float for half and
//    bf16_t, the type itself otherwise) and Elem<T>::store rounds back, so
//    16-bit floats compute in float32 and round once on store, like the CPU
//    backend.
//  * Strided operands are described in a `constant long* p` parameter (see
//    strided_offset); contiguous kernels get p[0] = element count.
//  * Grids are dispatched with dispatchThreads (non-uniform threadgroups), so
//    kernels need no padding; a kernel whose grid may overshoot (the 2-D grid
//    of contiguous kernels for more than 2^32 elements) checks its index.
//  * Kernels assume precise math (MTLCompileOptions fast math off): they rely
//    on NaN and Inf semantics (isnan, Maximum's NaN propagation).
//  * The harness compiles kernels as C++, which accepts what Metal rejects;
//    it also lints every library (mslcpu.Lint) and compiles it with Metal's
//    address spaces (mslcpu.SyntaxCheck). In short: a kernel's position and
//    size attributes (thread_position_in_grid, threads_per_threadgroup,
//    threadgroup_position_in_grid, ...) have one component count, each
//    position/size pair one type; thread_index_in_threadgroup and the
//    simdgroup attributes are scalars; pointers keep their address space;
//    no double, recursion, variable-length arrays, or min/max on 64-bit
//    integers (min64, max64 below). A kernel whose plans use a large or
//    fixed threadgroup declares [[max_total_threads_per_threadgroup(N)]],
//    and the harness refuses a launch above N, as a Metal pipeline would.
#include <metal_stdlib>
using namespace metal;

#ifndef instantiate_kernel
// On Metal: an explicit instantiation whose [[host_name]] is the kernel's
// name in the library. (The CPU harness defines both macros itself.)
#define instantiate_kernel(name, func, ...) \
  template [[host_name(name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;
#define register_kernel(func)
#endif

// ------------------------------------------------------------ element types
typedef ushort bf16_t;

inline float bf16_to_float(bf16_t b) { return as_type<float>(uint(b) << 16); }

// Round to nearest even; NaN stays a quiet NaN (array.NewBF16).
inline bf16_t float_to_bf16(float f) {
  uint u = as_type<uint>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    return bf16_t((u >> 16) | 0x40u);
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  return bf16_t(u >> 16);
}

template <typename T>
struct Elem {
  typedef T compute;
  static T load(T v) { return v; }
  static T store(T v) { return v; }
};
template <>
struct Elem<half> {
  typedef float compute;
  static float load(half v) { return float(v); }
  static half store(float v) { return half(v); }
};
template <>
struct Elem<bf16_t> {
  typedef float compute;
  static float load(bf16_t v) { return bf16_to_float(v); }
  static bf16_t store(float v) { return float_to_bf16(v); }
};
struct u16_t {
  ushort v;
};
template <>
struct Elem<u16_t> {
  typedef ushort compute;
  static ushort load(u16_t x) { return x.v; }
  static u16_t store(ushort x) {
    u16_t r;
    r.v = x;
    return r;
  }
};

// elem_read and elem_write move an element between device memory and a
// thread value of its storage type: plain loads and stores, but for
// u16_t, which Metal will not copy out of device memory into a by-value
// parameter or variable of the thread address space (nor assign into
// device memory), so uint16 moves as the ushort it holds.
template <typename T>
inline T elem_read(device const T* p) {
  return *p;
}
template <>
inline u16_t elem_read(device const u16_t* p) {
  u16_t r;
  r.v = *(device const ushort*)p;
  return r;
}
template <typename T>
inline void elem_write(device T* p, T v) {
  *p = v;
}
template <>
inline void elem_write(device u16_t* p, u16_t v) {
  *(device ushort*)p = v.v;
}

// Float to integer as the CPU backend converts: truncate toward zero
// through int64; NaN and values outside int64 give 0.
inline long float_to_long(float v) {
  return (v >= -9.223372036854775808e18f && v < 9.223372036854775807e18f) ? long(v) : 0;
}

// To<D>::conv(v) converts a compute value to the compute type D with numpy's
// astype rules: to bool is "not zero", floats to integers truncate (see
// float_to_long), integers wrap, complex to real keeps the real part.
// The integer compute types take one template overload; bool, float and
// float2 have their own, which overload resolution prefers.
template <typename D>
struct To {
  static D conv(bool v) { return D(v); }
  template <typename I>
  static D conv(I v) { return D(v); }
  static D conv(float v) { return D(float_to_long(v)); }
  static D conv(float2 v) { return D(float_to_long(v.x)); }
};
// uint64 also takes floats in [2^63, 2^64) exactly (cpu.Copy's rule).
inline ulong float_to_ulong(float v) {
  return (v >= 9.223372036854775807e18f && v < 1.8446744073709551616e19f) ? ulong(v) : ulong(float_to_long(v));
}
template <>
struct To<ulong> {
  static ulong conv(bool v) { return ulong(v); }
  template <typename I>
  static ulong conv(I v) { return ulong(v); }
  static ulong conv(float v) { return float_to_ulong(v); }
  static ulong conv(float2 v) { return float_to_ulong(v.x); }
};
template <>
struct To<bool> {
  static bool conv(bool v) { return v; }
  template <typename I>
  static bool conv(I v) { return v != 0; }
  static bool conv(float v) { return v != 0.0f; }
  static bool conv(float2 v) { return v.x != 0.0f || v.y != 0.0f; }
};
template <>
struct To<float> {
  static float conv(bool v) { return v ? 1.0f : 0.0f; }
  template <typename I>
  static float conv(I v) { return float(v); }
  static float conv(float v) { return v; }
  static float conv(float2 v) { return v.x; }
};
template <>
struct To<float2> {
  static float2 conv(bool v) { return float2(v ? 1.0f : 0.0f, 0.0f); }
  template <typename I>
  static float2 conv(I v) { return float2(float(v), 0.0f); }
  static float2 conv(float v) { return float2(v, 0.0f); }
  static float2 conv(float2 v) { return v; }
};

// convert<S, D>: storage S to storage D.
template <typename S, typename D>
inline D convert(S v) {
  return Elem<D>::store(To<typename Elem<D>::compute>::conv(Elem<S>::load(v)));
}

// ------------------------------------------------------------------ indexing
// Strided operands. p[0] = nd >= 1, p[1 .. nd] = the collapsed shape, then one
// block of nd+1 longs per operand k at p[1 + nd + k*(nd+1)]: the element
// offset of the operand's first element relative to its bound buffer offset
// (>= 0: the host binds each buffer at the lowest element the view reaches,
// so negative strides never index before it), then nd element strides
// (0 = broadcast, negative = reversed). The grid is (shape[nd-1],
// shape[nd-2], product of the rest): x and y need no division, z is
// unravelled over the leading dimensions in 64-bit arithmetic.
inline long strided_offset(constant long* p, int k, uint3 g) {
  int nd = int(p[0]);
  constant long* st = p + 1 + nd + k * (nd + 1);
  long off = st[0] + long(g.x) * st[nd];
  if (nd > 1) {
    off += long(g.y) * st[nd - 1];
  }
  ulong z = g.z;
  for (int d = nd - 3; d >= 0; d--) {
    ulong s = ulong(p[1 + d]);
    off += long(z % s) * st[1 + d];
    z /= s;
  }
  return off;
}

// Linear index of a contiguous kernel's thread: the grid is (n, 1, 1), or
// (X, ceil(n/X), 1) when n does not fit a 32-bit grid dimension.
inline ulong linear_index(uint2 gid, uint2 gsz) { return ulong(gid.y) * ulong(gsz.x) + ulong(gid.x); }

// ------------------------------------------------------ 64-bit min and max
// Metal's min and max take no 64-bit integers (MLX writes them out too),
// and the CPU harness refuses them like Metal: long bounds go through
// these.
inline long min64(long a, long b) { return a < b ? a : b; }
inline long max64(long a, long b) { return a < b ? b : a; }

// -------------------------------------------------------- wrapping integers
// Signed overflow is undefined in C++ (the harness) and MSL: integer
// arithmetic goes through the unsigned type, which wraps like Go.
// The narrow types compute in uint and truncate on return.
inline uchar wrap_add(uchar a, uchar b) { return uchar(a + b); }
inline int wrap_add(int a, int b) { return int(uint(a) + uint(b)); }
inline long wrap_add(long a, long b) { return long(ulong(a) + ulong(b)); }
inline uchar wrap_sub(uchar a, uchar b) { return uchar(a - b); }
inline int wrap_sub(int a, int b) { return int(uint(a) - uint(b)); }
inline long wrap_sub(long a, long b) { return long(ulong(a) - ulong(b)); }
inline uchar wrap_mul(uchar a, uchar b) { return uchar(uint(a) * uint(b)); }
inline int wrap_mul(int a, int b) { return int(uint(a) * uint(b)); }
inline long wrap_mul(long a, long b) { return long(ulong(a) * ulong(b)); }
inline char wrap_add(char a, char b) { return char(uchar(uint(a) + uint(b))); }
inline char wrap_sub(char a, char b) { return char(uchar(uint(a) - uint(b))); }
inline char wrap_mul(char a, char b) { return char(uchar(uint(a) * uint(b))); }
inline short wrap_add(short a, short b) { return short(ushort(uint(a) + uint(b))); }
inline short wrap_sub(short a, short b) { return short(ushort(uint(a) - uint(b))); }
inline short wrap_mul(short a, short b) { return short(ushort(uint(a) * uint(b))); }
inline ushort wrap_add(ushort a, ushort b) { return ushort(uint(a) + uint(b)); }
inline ushort wrap_sub(ushort a, ushort b) { return ushort(uint(a) - uint(b)); }
inline ushort wrap_mul(ushort a, ushort b) { return ushort(uint(a) * uint(b)); }
inline uint wrap_add(uint a, uint b) { return a + b; }
inline uint wrap_sub(uint a, uint b) { return a - b; }
inline uint wrap_mul(uint a, uint b) { return a * b; }
inline ulong wrap_add(ulong a, ulong b) { return a + b; }
inline ulong wrap_sub(ulong a, ulong b) { return a - b; }
inline ulong wrap_mul(ulong a, ulong b) { return a * b; }

// ------------------------------------------------------ functions MSL lacks
// expm1 and log1p by Kahan's corrections: the rounding error of exp(x) or
// 1+x cancels in the quotient, which keeps them accurate near 0.
inline float fathom_expm1(float x) {
  float u = exp(x);
  if (u == 1.0f) {
    return x;
  }
  float um1 = u - 1.0f;
  if (um1 == -1.0f) {
    return -1.0f;
  }
  if (u == INFINITY) {
    return u;
  }
  return um1 * x / log(u);
}

inline float fathom_log1p(float x) {
  float u = 1.0f + x;
  if (u == 1.0f) {
    return x;
  }
  if (u == INFINITY) {
    return u;
  }
  return log(u) * x / (u - 1.0f);
}

// erf and erfinv: N. Juffa's faithfully rounded float approximations
// (stackoverflow.com/questions/35148198 and /questions/27229371), the same
// polynomials MLX uses.
inline float fathom_erf(float a) {
  float r, s, t, u;
  t = fabs(a);
  s = a * a;
  if (t > 0.927734375f) {
    r = fma(-1.72853470e-5f, t, 3.83197126e-4f);
    u = fma(-3.88396438e-3f, t, 2.42546219e-2f);
    r = fma(r, s, u);
    r = fma(r, t, -1.06777877e-1f);
    r = fma(r, t, -6.34846687e-1f);
    r = fma(r, t, -1.28717512e-1f);
    r = fma(r, t, -t);
    r = 1.0f - exp(r);
    r = copysign(r, a);
  } else {
    r = -5.96761703e-4f;
    r = fma(r, s, 4.99119423e-3f);
    r = fma(r, s, -2.67681349e-2f);
    r = fma(r, s, 1.12819925e-1f);
    r = fma(r, s, -3.76125336e-1f);
    r = fma(r, s, 1.28379166e-1f);
    r = fma(r, a, a);
  }
  return r;
}

inline float fathom_erfinv(float a) {
  float t = fma(a, 0.0f - a, 1.0f);
  t = log(t);
  float p;
  if (fabs(t) > 6.125f) {
    p = 3.03697567e-10f;
    p = fma(p, t, 2.93243101e-8f);
    p = fma(p, t, 1.22150334e-6f);
    p = fma(p, t, 2.84108955e-5f);
    p = fma(p, t, 3.93552968e-4f);
    p = fma(p, t, 3.02698812e-3f);
    p = fma(p, t, 4.83185798e-3f);
    p = fma(p, t, -2.64646143e-1f);
    p = fma(p, t, 8.40016484e-1f);
  } else {
    p = 5.43877832e-9f;
    p = fma(p, t, 1.43285448e-7f);
    p = fma(p, t, 1.22774793e-6f);
    p = fma(p, t, 1.12963626e-7f);
    p = fma(p, t, -5.61530760e-5f);
    p = fma(p, t, -1.47697632e-4f);
    p = fma(p, t, 2.31468678e-3f);
    p = fma(p, t, 1.15392581e-2f);
    p = fma(p, t, -2.32015476e-1f);
    p = fma(p, t, 8.86226892e-1f);
  }
  return a * p;
}

// |z| without overflow or underflow in the squares.
inline float complex_abs(float2 z) {
  float a = fabs(z.x), b = fabs(z.y);
  float m = max(a, b);
  if (isinf(a) || isinf(b)) {
    return INFINITY;
  }
  if (m == 0.0f || isnan(m)) {
    return a + b;
  }
  a /= m;
  b /= m;
  return m * sqrt(a * a + b * b);
}

inline float2 complex_mul(float2 a, float2 b) { return float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }

// Go's complex division (runtime.complex128div): Smith's algorithm, then
// C99's infinities and zeros where it gives NaN in both parts.
inline float inf2one(float f) { return copysign(isinf(f) ? 1.0f : 0.0f, f); }

inline float2 complex_div(float2 n, float2 m) {
  float e, f;
  if (fabs(m.x) >= fabs(m.y)) {
    float ratio = m.y / m.x;
    float denom = m.x + ratio * m.y;
    e = (n.x + n.y * ratio) / denom;
    f = (n.y - n.x * ratio) / denom;
  } else {
    float ratio = m.x / m.y;
    float denom = m.y + ratio * m.x;
    e = (n.x * ratio + n.y) / denom;
    f = (n.y * ratio - n.x) / denom;
  }
  if (isnan(e) && isnan(f)) {
    float a = n.x, b = n.y, c = m.x, d = m.y;
    if (c == 0.0f && d == 0.0f && (!isnan(a) || !isnan(b))) {
      e = copysign(INFINITY, c) * a;
      f = copysign(INFINITY, c) * b;
    } else if ((isinf(a) || isinf(b)) && isfinite(c) && isfinite(d)) {
      a = inf2one(a);
      b = inf2one(b);
      e = INFINITY * (a * c + b * d);
      f = INFINITY * (b * c - a * d);
    } else if ((isinf(c) || isinf(d)) && isfinite(a) && isfinite(b)) {
      c = inf2one(c);
      d = inf2one(d);
      e = 0.0f * (a * c + b * d);
      f = 0.0f * (b * c - a * d);
    }
  }
  return float2(e, f);
}

// Go's cmplx.Exp, cmplx.Log and cmplx.Sqrt (the CPU backend's complex
// functions), special cases included, in float.
inline float2 complex_exp(float2 z) {
  float re = z.x, im = z.y;
  if (isinf(re)) {
    if (re > 0.0f && im == 0.0f) {
      return z;
    }
    if (isinf(im) || isnan(im)) {
      return re < 0.0f ? float2(0.0f, copysign(0.0f, im)) : float2(INFINITY, NAN);
    }
  } else if (isnan(re) && im == 0.0f) {
    return float2(NAN, im);
  }
  float r = exp(re);
  return float2(r * cos(im), r * sin(im));
}

inline float2 complex_log(float2 z) { return float2(log(complex_abs(z)), atan2(z.y, z.x)); }

inline float2 complex_sqrt(float2 z) {
  float a = z.x, b = z.y;
  if (b == 0.0f) {
    if (a == 0.0f) {
      return float2(0.0f, b);
    }
    if (a < 0.0f) {
      return float2(0.0f, copysign(sqrt(-a), b));
    }
    return float2(sqrt(a), b);
  }
  if (isinf(b)) {
    return float2(INFINITY, b);
  }
  if (a == 0.0f) {
    float r = sqrt(0.5f * fabs(b));
    return b < 0.0f ? float2(r, -r) : float2(r, r);
  }
  // Rescale to avoid overflow or underflow inside.
  float scale;
  if (fabs(a) > 4.0f || fabs(b) > 4.0f) {
    a *= 0.25f;
    b *= 0.25f;
    scale = 2.0f;
  } else {
    a *= 1.8014398509481984e16f;  // 2^54
    b *= 1.8014398509481984e16f;
    scale = 7.450580596923828125e-9f;  // 2^-27
  }
  float r = complex_abs(float2(a, b));
  float t;
  if (a > 0.0f) {
    t = sqrt(0.5f * r + 0.5f * a);
    r = scale * fabs((0.5f * b) / t);
    t *= scale;
  } else {
    r = sqrt(0.5f * r - 0.5f * a);
    t = scale * fabs((0.5f * b) / r);
    r *= scale;
  }
  return b < 0.0f ? float2(t, -r) : float2(t, r);
}

// ------------------------------------------------------------ unary ops
// One functor per operation, named like package ops; overloads exist for the
// compute types the operation supports (see metal.UnaryResult).
struct Neg {
  float operator()(float x) { return -x; }
  float2 operator()(float2 x) { return -x; }
  uchar operator()(uchar x) { return uchar(0u - uint(x)); }
  int operator()(int x) { return wrap_sub(0, x); }
  long operator()(long x) { return wrap_sub(0L, x); }
  template <typename T>
  T operator()(T x) { return wrap_sub(T(0), x); }
};
struct Abs {
  float operator()(float x) { return fabs(x); }
  float operator()(float2 x) { return complex_abs(x); }
  bool operator()(bool x) { return x; }
  uchar operator()(uchar x) { return x; }
  int operator()(int x) { return x < 0 ? wrap_sub(0, x) : x; }
  long operator()(long x) { return x < 0 ? wrap_sub(0L, x) : x; }
  template <typename T>
  T operator()(T x) { return x < T(0) ? wrap_sub(T(0), x) : x; }
};
struct Sign {
  float operator()(float x) { return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x == 0.0f ? 0.0f : x; }
  bool operator()(bool x) { return x; }
  uchar operator()(uchar x) { return x > 0 ? 1 : 0; }
  int operator()(int x) { return x > 0 ? 1 : x < 0 ? -1 : 0; }
  long operator()(long x) { return x > 0 ? 1 : x < 0 ? -1 : 0; }
  template <typename T>
  T operator()(T x) { return x > T(0) ? T(1) : x < T(0) ? T(-1) : T(0); }
};
struct Square {
  float operator()(float x) { return x * x; }
  float2 operator()(float2 x) { return complex_mul(x, x); }
  bool operator()(bool x) { return x; }
  uchar operator()(uchar x) { return wrap_mul(x, x); }
  int operator()(int x) { return wrap_mul(x, x); }
  long operator()(long x) { return wrap_mul(x, x); }
  template <typename T>
  T operator()(T x) { return wrap_mul(x, x); }
};
// Floor, Ceil and Round leave integers and bools as they are.
struct Floor {
  float operator()(float x) { return floor(x); }
  template <typename T>
  T operator()(T x) { return x; }
};
struct Ceil {
  float operator()(float x) { return ceil(x); }
  template <typename T>
  T operator()(T x) { return x; }
};
// Halves to even (numpy): rint in the default rounding mode.
struct Round {
  float operator()(float x) { return rint(x); }
  template <typename T>
  T operator()(T x) { return x; }
};
struct Trunc {
  float operator()(float x) { return trunc(x); }
  template <typename T>
  T operator()(T x) { return x; }
};
struct Invert {
  bool operator()(bool x) { return !x; }
  template <typename T>
  T operator()(T x) { return T(~x); }
};
struct Conj {
  float2 operator()(float2 x) { return float2(x.x, -x.y); }
};
struct Real {
  float operator()(float2 x) { return x.x; }
};
struct Imag {
  float operator()(float2 x) { return x.y; }
};
// The argument of a real x is atan2(0, x), as numpy's angle: π for -0.
struct Angle {
  float operator()(float x) { return atan2(0.0f, x); }
  float operator()(float2 x) { return atan2(x.y, x.x); }
};
struct LogicalNot {
  bool operator()(float2 x) { return x.x == 0.0f && x.y == 0.0f; }
  template <typename T>
  bool operator()(T x) { return x == 0; }
};
struct IsNaN {
  bool operator()(float x) { return isnan(x); }
  bool operator()(float2 x) { return isnan(x.x) || isnan(x.y); }
  template <typename T>
  bool operator()(T) { return false; }
};
struct IsInf {
  bool operator()(float x) { return isinf(x); }
  bool operator()(float2 x) { return isinf(x.x) || isinf(x.y); }
  template <typename T>
  bool operator()(T) { return false; }
};
// Complex Reciprocal, Rsqrt and Log2 divide like Go (complex_div), which
// the CPU backend's complex128 arithmetic does.
struct Exp {
  float operator()(float x) { return exp(x); }
  float2 operator()(float2 x) { return complex_exp(x); }
};
struct Log {
  float operator()(float x) { return log(x); }
  float2 operator()(float2 x) { return complex_log(x); }
};
struct Log2 {
  float operator()(float x) { return log2(x); }
  float2 operator()(float2 x) { return complex_div(complex_log(x), float2(M_LN2_F, 0.0f)); }
};
struct Sqrt {
  float operator()(float x) { return sqrt(x); }
  float2 operator()(float2 x) { return complex_sqrt(x); }
};
struct Rsqrt {
  float operator()(float x) { return 1.0f / sqrt(x); }
  float2 operator()(float2 x) { return complex_div(float2(1.0f, 0.0f), complex_sqrt(x)); }
};
struct Reciprocal {
  float operator()(float x) { return 1.0f / x; }
  float2 operator()(float2 x) { return complex_div(float2(1.0f, 0.0f), x); }
};
#define FATHOM_FLOAT_UNARY(name, expr)  \
  struct name {                         \
    float operator()(float x) { return expr; } \
  };
FATHOM_FLOAT_UNARY(Expm1, fathom_expm1(x))
FATHOM_FLOAT_UNARY(Log1p, fathom_log1p(x))
FATHOM_FLOAT_UNARY(Sin, sin(x))
FATHOM_FLOAT_UNARY(Cos, cos(x))
FATHOM_FLOAT_UNARY(Tan, tan(x))
FATHOM_FLOAT_UNARY(ArcSin, asin(x))
FATHOM_FLOAT_UNARY(ArcCos, acos(x))
FATHOM_FLOAT_UNARY(ArcTan, atan(x))
FATHOM_FLOAT_UNARY(ArcSinh, asinh(x))
FATHOM_FLOAT_UNARY(ArcCosh, acosh(x))
FATHOM_FLOAT_UNARY(ArcTanh, atanh(x))
FATHOM_FLOAT_UNARY(Log10, log10(x))
FATHOM_FLOAT_UNARY(Sinh, sinh(x))
FATHOM_FLOAT_UNARY(Cosh, cosh(x))
FATHOM_FLOAT_UNARY(Tanh, tanh(x))
FATHOM_FLOAT_UNARY(Sigmoid, 1.0f / (1.0f + exp(-x)))
FATHOM_FLOAT_UNARY(Erf, fathom_erf(x))
FATHOM_FLOAT_UNARY(ErfInv, fathom_erfinv(x))
#undef FATHOM_FLOAT_UNARY

// ----------------------------------------------------------- binary ops
struct Add {
  float operator()(float a, float b) { return a + b; }
  float2 operator()(float2 a, float2 b) { return a + b; }
  bool operator()(bool a, bool b) { return a || b; }
  template <typename T>
  T operator()(T a, T b) { return wrap_add(a, b); }
};
struct Sub {
  float operator()(float a, float b) { return a - b; }
  float2 operator()(float2 a, float2 b) { return a - b; }
  template <typename T>
  T operator()(T a, T b) { return wrap_sub(a, b); }
};
struct Mul {
  float operator()(float a, float b) { return a * b; }
  float2 operator()(float2 a, float2 b) { return complex_mul(a, b); }
  bool operator()(bool a, bool b) { return a && b; }
  template <typename T>
  T operator()(T a, T b) { return wrap_mul(a, b); }
};
struct Div {
  float operator()(float a, float b) { return a / b; }
  float2 operator()(float2 a, float2 b) { return complex_div(a, b); }
};

// numpy's npy_divmod in float: the floored quotient, and the remainder with
// the divisor's sign.
inline float2 float_divmod(float a, float b) {
  float mod = fmod(a, b);
  if (b == 0.0f) {
    return float2(a / b, mod);
  }
  float q = (a - mod) / b;
  if (mod != 0.0f) {
    if ((b < 0.0f) != (mod < 0.0f)) {
      mod += b;
      q -= 1.0f;
    }
  } else {
    mod = copysign(0.0f, b);
  }
  float div;
  if (q != 0.0f) {
    div = floor(q);
    if (q - div > 0.5f) {
      div += 1.0f;
    }
  } else {
    div = copysign(0.0f, a / b);
  }
  return float2(div, mod);
}

// Integer floor division and remainder (numpy: floor, sign of the
// divisor); a zero divisor gives 0, and x / -1 wraps instead of trapping.
template <typename T>
inline T int_floordiv(T a, T b) {
  if (b == 0) {
    return 0;
  }
  if (b < 0 && T(b + 1) == 0) {
    return wrap_sub(T(0), a);
  }
  T q = a / b;
  T r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) {
    q = q - 1;
  }
  return q;
}
template <typename T>
inline T int_remainder(T a, T b) {
  if (b == 0 || (b < 0 && T(b + 1) == 0)) {
    return 0;
  }
  T r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) {
    r = r + b;
  }
  return r;
}
struct FloorDivide {
  float operator()(float a, float b) { return float_divmod(a, b).x; }
  template <typename T>
  T operator()(T a, T b) { return int_floordiv(a, b); }
};
struct Remainder {
  float operator()(float a, float b) { return float_divmod(a, b).y; }
  template <typename T>
  T operator()(T a, T b) { return int_remainder(a, b); }
};

// pow with numpy's result for a negative base and an integral exponent,
// whatever the Metal library does for negative bases.
inline float float_pow(float a, float b) {
  if (a < 0.0f && b == rint(b) && !isinf(b)) {
    float m = pow(-a, b);
    return fmod(b, 2.0f) != 0.0f ? -m : m;
  }
  return pow(a, b);
}
// Integer power by repeated squaring, wrapping; a negative exponent gives 0
// except for the bases 1 and -1.
template <typename T>
inline T int_pow(T a, T b) {
  if (b < 0) {
    if (a == 1) {
      return 1;
    }
    if (T(a + 1) == 0) {
      return (b % 2 == 0) ? T(1) : a;
    }
    return 0;
  }
  T r = 1;
  while (b > 0) {
    if ((b & 1) != 0) {
      r = wrap_mul(r, a);
    }
    a = wrap_mul(a, a);
    b = T(b >> 1);
  }
  return r;
}
struct Pow {
  float operator()(float a, float b) { return float_pow(a, b); }
  template <typename T>
  T operator()(T a, T b) { return int_pow(a, b); }
};
// Maximum and Minimum propagate NaN from either side (numpy).
struct Maximum {
  float operator()(float a, float b) { return (a < b || isnan(b)) ? b : a; }
  bool operator()(bool a, bool b) { return a || b; }
  template <typename T>
  T operator()(T a, T b) { return a < b ? b : a; }
};
struct Minimum {
  float operator()(float a, float b) { return (a > b || isnan(b)) ? b : a; }
  bool operator()(bool a, bool b) { return a && b; }
  template <typename T>
  T operator()(T a, T b) { return a > b ? b : a; }
};
struct Equal {
  bool operator()(float2 a, float2 b) { return a.x == b.x && a.y == b.y; }
  template <typename T>
  bool operator()(T a, T b) { return a == b; }
};
struct NotEqual {
  bool operator()(float2 a, float2 b) { return a.x != b.x || a.y != b.y; }
  template <typename T>
  bool operator()(T a, T b) { return a != b; }
};
struct Less {
  template <typename T>
  bool operator()(T a, T b) { return a < b; }
};
struct LessEqual {
  template <typename T>
  bool operator()(T a, T b) { return a <= b; }
};
struct Greater {
  template <typename T>
  bool operator()(T a, T b) { return a > b; }
};
struct GreaterEqual {
  template <typename T>
  bool operator()(T a, T b) { return a >= b; }
};
struct LogicalAnd {
  bool operator()(bool a, bool b) { return a && b; }
};
struct LogicalOr {
  bool operator()(bool a, bool b) { return a || b; }
};
// numpy's npy_logaddexp.
struct LogAddExp {
  float operator()(float a, float b) {
    if (a == b) {
      return a + M_LN2_F;
    }
    float d = a - b;
    if (d > 0.0f) {
      return a + fathom_log1p(exp(-d));
    }
    if (d <= 0.0f) {
      return b + fathom_log1p(exp(d));
    }
    return d;
  }
};
struct ArcTan2 {
  float operator()(float a, float b) { return atan2(a, b); }
};
// Hypot scales by the larger magnitude so that squaring cannot overflow;
// an infinite operand wins over NaN, as in numpy.
struct Hypot {
  float operator()(float a, float b) {
    a = fabs(a);
    b = fabs(b);
    if (isinf(a) || isinf(b)) {
      return INFINITY;
    }
    if (isnan(a) || isnan(b)) {
      return NAN;
    }
    float m = a > b ? a : b;
    if (m == 0.0f) {
      return 0.0f;
    }
    float r = (a > b ? b : a) / m;
    return m * sqrt(1.0f + r * r);
  }
};
struct BitwiseAnd {
  bool operator()(bool a, bool b) { return a && b; }
  template <typename T>
  T operator()(T a, T b) { return T(a & b); }
};
struct BitwiseOr {
  bool operator()(bool a, bool b) { return a || b; }
  template <typename T>
  T operator()(T a, T b) { return T(a | b); }
};
struct BitwiseXor {
  bool operator()(bool a, bool b) { return a != b; }
  template <typename T>
  T operator()(T a, T b) { return T(a ^ b); }
};
// Shifts by a negative count or one of at least the width are undefined in
// MSL; numpy defines them as 0 (-1 for a right shift of a negative value).
struct LeftShift {
  template <typename T>
  T operator()(T a, T b) { return (b >= T(0) && ulong(b) < sizeof(T) * 8) ? T(a << b) : T(0); }
};
struct RightShift {
  template <typename T>
  T operator()(T a, T b) {
    if (b >= T(0) && ulong(b) < sizeof(T) * 8) {
      return T(a >> b);
    }
    return a < T(0) ? T(~T(0)) : T(0);
  }
};
