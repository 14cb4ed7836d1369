// rope.metal: rotary position embeddings (see rope.go), as backend/cpu's
// rope.go computes them, with the angles in float rather than double.
// Host names: rope_<dtype> for float32, float16 and bfloat16.
// Buffers: [[buffer(0)]] x, [[buffer(1)]] out (row-major),
// [[buffer(2)]] RopeParams.

// RopeParams: rows of n features; the rows' index splits over the shape
// lead[0..nl) (row-major), x's strides on those axes are xl, along a row
// xs. A row's position is its index modulo positions. Pair i of the first
// dims features turns by (offset + position)·scale·base^(-2i/dims);
// log2_base and scale are floats' bits.
struct RopeParams {
  long n, rows, nl;
  long lead[8], xl[8];
  long x_off, xs, positions, dims, traditional, log2_base, scale, offset;
};

// rope_elems: a thread per output element (gid.x the feature, gid.y the
// row), which reads its own feature and its pair's.
template <typename T>
[[kernel]] void rope_elems(
    device const T* x [[buffer(0)]], device T* out [[buffer(1)]], constant RopeParams& p [[buffer(2)]],
    uint2 gid [[thread_position_in_grid]]) {
  long j = gid.x, r = gid.y;
  if (j >= p.n || r >= p.rows) return;
  long off = p.x_off;
  long rr = r;
  for (long d = p.nl - 1; d >= 0; d--) {
    off += (rr % p.lead[d]) * p.xl[d];
    rr /= p.lead[d];
  }
  device const T* xr = x + off;
  float v = float(Elem<T>::load(xr[j * p.xs]));
  if (j < p.dims) {
    long half_dims = p.dims / 2;
    long i, partner;
    bool first;
    if (p.traditional) {
      i = j / 2;
      first = (j % 2) == 0;
      partner = first ? j + 1 : j - 1;
    } else {
      first = j < half_dims;
      i = first ? j : j - half_dims;
      partner = first ? j + half_dims : j - half_dims;
    }
    float u = float(Elem<T>::load(xr[partner * p.xs]));
    float inv = exp2(-2.0f * float(i) / float(p.dims) * as_type<float>(uint(p.log2_base)));
    float ang = float(p.offset + r % p.positions) * as_type<float>(uint(p.scale)) * inv;
    float c = cos(ang), s = sin(ang);
    v = first ? v * c - u * s : u * s + v * c;
  }
  out[r * p.n + j] = Elem<T>::store(typename Elem<T>::compute(v));
}

instantiate_kernel("rope_float32", rope_elems, float)
instantiate_kernel("rope_float16", rope_elems, half)
instantiate_kernel("rope_bfloat16", rope_elems, bf16_t)
