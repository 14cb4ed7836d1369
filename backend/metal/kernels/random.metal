// random.metal: counter-based random numbers, Threefry-2x32 with 20 rounds
// (see random.go for the plans). The counters are backend/cpu's (JAX's
// threefry random_bits, which MLX's bits follows), so the GPU's bits are
// the CPU's: key k gives the W 32-bit words of its part of the output from
// the counters 0 .. W-1, hashed in pairs. With h = ceil(W/2), pair q hashes
// the block (q, h+q) (the second word is 0 when h+q = W, an odd W's
// padding) and gives word q its first result and word h+q its second.
//
// One thread per (key, pair): i = k*h + q, i < p[2] = keys*h. The kernels
// but threefry2x32_counts take [[buffer(0)]] keys (contiguous uint32
// pairs), [[buffer(1)]] out, [[buffer(2)]] constant long* p with
//   p[0] = W, p[1] = h, p[2] = keys*h, p[3] = out's offset in elements.
// Host names:
//   random_bits_uint32                   words, one per element
//   random_bits_uint16, random_bits_uint8  the words' bytes in little-endian
//                                        order, W*4 >= the part's bytes
//                                        p[4] = the part's size in bytes
//   random_uniform_<float dtype>         p[4..7] = float32 bits of low, high
//                                        - low, the largest value below
//                                        high, the largest u below 1
//   random_normal_<float dtype>          p[4..6] = float32 bits of
//                                        sqrt(2)*scale and loc, and 1 to
//                                        add loc
//   threefry2x32_counts                  JAX's threefry_2x32 of W counts
//                                        (its buffers are below)
// The distributions map words to values as cpu.RandomFloats does, step
// for step in float32 and rounding to 16-bit floats where it does.
// Grid (keys*h, 1, 1), or (X, ceil(keys*h/X), 1) past the grid limit.

// ------------------------------------------------------------ Threefry
inline uint rotl32(uint x, uint r) { return (x << r) | (x >> (32u - r)); }

// Four rounds with Threefry-2x32's rotations 13 15 26 6, and 17 29 16 24.
inline uint2 tf_rounds0(uint2 x) {
  x.x += x.y;
  x.y = rotl32(x.y, 13u) ^ x.x;
  x.x += x.y;
  x.y = rotl32(x.y, 15u) ^ x.x;
  x.x += x.y;
  x.y = rotl32(x.y, 26u) ^ x.x;
  x.x += x.y;
  x.y = rotl32(x.y, 6u) ^ x.x;
  return x;
}

inline uint2 tf_rounds1(uint2 x) {
  x.x += x.y;
  x.y = rotl32(x.y, 17u) ^ x.x;
  x.x += x.y;
  x.y = rotl32(x.y, 29u) ^ x.x;
  x.x += x.y;
  x.y = rotl32(x.y, 16u) ^ x.x;
  x.x += x.y;
  x.y = rotl32(x.y, 24u) ^ x.x;
  return x;
}

// threefry2x32 is Random123's Threefry-2x32-20: the block x encrypted
// under key k, five groups of four rounds with a key injection after each.
inline uint2 threefry2x32(uint2 k, uint2 x) {
  uint k2 = k.x ^ k.y ^ 0x1BD11BDAu;
  x += k;
  x = tf_rounds0(x);
  x += uint2(k.y, k2 + 1u);
  x = tf_rounds1(x);
  x += uint2(k2, k.x + 2u);
  x = tf_rounds0(x);
  x += uint2(k.x, k.y + 3u);
  x = tf_rounds1(x);
  x += uint2(k.y, k2 + 4u);
  x = tf_rounds0(x);
  x += uint2(k2, k.x + 5u);
  return x;
}

// Pair is one thread's block: key k, pair q, whether word h+q exists, and
// its two words.
struct Pair {
  ulong k, q;
  bool second;
  uint2 y;
};

inline Pair pair_of(device const uint* keys, constant long* p, ulong i) {
  ulong w = ulong(p[0]), h = ulong(p[1]);
  Pair r;
  r.k = i / h;
  r.q = i % h;
  r.second = h + r.q < w;
  uint2 key = uint2(keys[2 * r.k], keys[2 * r.k + 1]);
  r.y = threefry2x32(key, uint2(uint(r.q), r.second ? uint(h + r.q) : 0u));
  return r;
}

// ------------------------------------------------------------ bits
// random_bits_words writes the words themselves (W is uint), one element
// each.
template <typename W>
[[kernel]] void random_bits_words(
    device const uint* keys [[buffer(0)]],
    device W* out [[buffer(1)]],
    constant long* p [[buffer(2)]],
    uint2 gid [[thread_position_in_grid]],
    uint2 gsz [[threads_per_grid]]) {
  ulong i = linear_index(gid, gsz);
  if (i >= ulong(p[2])) {
    return;
  }
  Pair r = pair_of(keys, p, i);
  device W* o = out + p[3] + r.k * ulong(p[0]);
  o[r.q] = W(r.y.x);
  if (r.second) {
    o[ulong(p[1]) + r.q] = W(r.y.y);
  }
}

instantiate_kernel("random_bits_uint32", random_bits_words, uint)

// put_word stores the bytes of y that fall before n at o[j...], low byte
// first.
inline void put_word(device uchar* o, ulong j, uint y, ulong n) {
  for (ulong b = 0; b < 4 && j + b < n; b++) {
    o[j + b] = uchar(y >> (8 * b));
  }
}

// random_bits_narrow writes the bytes of elements of Width bytes: a key's
// part is p[4] bytes, which need not be whole words (the last word of a
// part is cut short, as JAX's and MLX's are).
template <int Width>
[[kernel]] void random_bits_narrow(
    device const uint* keys [[buffer(0)]],
    device uchar* out [[buffer(1)]],
    constant long* p [[buffer(2)]],
    uint2 gid [[thread_position_in_grid]],
    uint2 gsz [[threads_per_grid]]) {
  ulong i = linear_index(gid, gsz);
  if (i >= ulong(p[2])) {
    return;
  }
  Pair r = pair_of(keys, p, i);
  ulong n = ulong(p[4]);
  device uchar* o = out + ulong(p[3]) * Width + r.k * n;
  put_word(o, 4 * r.q, r.y.x, n);
  if (r.second) {
    put_word(o, 4 * (ulong(p[1]) + r.q), r.y.y, n);
  }
}

instantiate_kernel("random_bits_uint16", random_bits_narrow, 2)
instantiate_kernel("random_bits_uint8", random_bits_narrow, 1)

// ------------------------------------------------------------ floats
// rnd rounds a float32 to T and back (the identity for float).
template <typename T> inline float rnd(float x) { return Elem<T>::load(Elem<T>::store(x)); }

inline float pf(constant long* p, int j) { return as_type<float>(uint(p[j])); }

// The largest u below 1 comes from the host: float32's, or the 16-bit
// format's (uniform draws of float16 and bfloat16).
// 2.3283064365386963e-10f is 2^-32.
inline float unit(uint w, float upper) { return min(float(w) * 2.3283064365386963e-10f, upper); }

// Uniform: (high-low)*u + low in T, at most the largest value below high.
// In float32 the product rounds before the sum: fma(r, u, +0) is r*u
// rounded once (r*u >= 0), which a compiler cannot contract into the add
// (a plain product it may, giving one rounding for two).
struct Uniform {
  template <typename T> static float map(uint w, constant long* p) {
    float u = rnd<T>(unit(w, pf(p, 7)));
    return min(rnd<T>(rnd<T>(fma(pf(p, 5), u, 0.0f)) + pf(p, 4)), pf(p, 6));
  }
};

// Normal: sqrt(2)*erfinv(v) for v = 2u - (1 - 2^-24) in float32 (MLX's
// normal), times scale, plus loc; 16-bit floats round as the CPU's steps
// do.
struct Normal {
  template <typename T> static float map(uint w, constant long* p) {
    // 0.99999994f is 1 - 2^-24, float32's largest value below 1.
    float v = 2.0f * unit(w, 0.99999994f) - 0.99999994f;
    float e = fathom_erfinv(v);
    float x = rnd<T>(fma(pf(p, 4), rnd<T>(e), 0.0f));
    return p[6] != 0 ? rnd<T>(x + pf(p, 5)) : x;
  }
};

template <typename T, typename Dist>
[[kernel]] void random_floats(
    device const uint* keys [[buffer(0)]],
    device T* out [[buffer(1)]],
    constant long* p [[buffer(2)]],
    uint2 gid [[thread_position_in_grid]],
    uint2 gsz [[threads_per_grid]]) {
  ulong i = linear_index(gid, gsz);
  if (i >= ulong(p[2])) {
    return;
  }
  Pair r = pair_of(keys, p, i);
  device T* o = out + p[3] + r.k * ulong(p[0]);
  o[r.q] = Elem<T>::store(Dist::template map<T>(r.y.x, p));
  if (r.second) {
    o[ulong(p[1]) + r.q] = Elem<T>::store(Dist::template map<T>(r.y.y, p));
  }
}

instantiate_kernel("random_uniform_float32", random_floats, float, Uniform)
instantiate_kernel("random_uniform_float16", random_floats, half, Uniform)
instantiate_kernel("random_uniform_bfloat16", random_floats, bf16_t, Uniform)
instantiate_kernel("random_normal_float32", random_floats, float, Normal)
instantiate_kernel("random_normal_float16", random_floats, half, Normal)
instantiate_kernel("random_normal_bfloat16", random_floats, bf16_t, Normal)

// ------------------------------------------------------------ threefry2x32
// JAX's threefry_2x32 under one key of W counts: block q is (counts[q],
// counts[h+q]), padded with 0. Buffers: [[buffer(0)]] the key,
// [[buffer(1)]] the counts (contiguous), [[buffer(2)]] out, [[buffer(3)]]
// p as above (keys*h = h). W is uint.
template <typename W>
[[kernel]] void threefry_counts(
    device const W* key [[buffer(0)]],
    device const W* counts [[buffer(1)]],
    device W* out [[buffer(2)]],
    constant long* p [[buffer(3)]],
    uint2 gid [[thread_position_in_grid]],
    uint2 gsz [[threads_per_grid]]) {
  ulong q = linear_index(gid, gsz);
  if (q >= ulong(p[2])) {
    return;
  }
  ulong w = ulong(p[0]), h = ulong(p[1]);
  bool second = h + q < w;
  uint2 y = threefry2x32(uint2(key[0], key[1]), uint2(counts[q], second ? counts[h + q] : 0u));
  device W* o = out + p[3];
  o[q] = W(y.x);
  if (second) {
    o[h + q] = W(y.y);
  }
}

instantiate_kernel("threefry2x32_counts", threefry_counts, uint)
