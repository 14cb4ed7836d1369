// pool.metal: pooling over the spatial axes of channels-last arrays and
// its derivatives (see pool.go), as backend/cpu's pool.go computes them,
// over 1 to 3 spatial axes widened to 3 by leading axes of size 1. Host
// names: pool_max_<dtype> (floats and integers), pool_avg_<dtype>,
// pool_avg_grad_<dtype>, pool_max_gather_<dtype> and
// pool_max_scatter_<dtype> (float32, float16, bfloat16; 16-bit floats
// compute in float and round once). Every kernel runs a thread per
// element of its output (gid.x the channel, gid.y the position) and
// writes it once: the derivatives that the CPU scatters are gathers here,
// adding the same terms in the same order, so they need no atomics.
// Buffers: [[buffer(0)]] a, [[buffer(1)]] b (the gathers and scatters'
// second input; a again otherwise), [[buffer(2)]] out, [[buffer(3)]]
// PoolParams.

// PoolParams: the pooled input has spatial shape in, the pooled result
// out, with windows k, strides s and padding p per axis. a, b and out are
// given by their offsets from their bound buffers and five strides
// (batch, three spatial axes, channel). rows is the number of spatial
// positions (times the batch) of the kernel's output.
struct PoolParams {
  long n, c, rows;
  long in[3], out[3], k[3], s[3], p[3];
  long a_off, b_off, o_off;
  long ast[5], bst[5], ost[5];
};

// pool_pos splits row r of a position grid of spatial shape sp into its
// batch index and position, in 32-bit arithmetic: r is a grid index.
inline long pool_pos(uint r, constant long* sp, thread long* pos) {
  for (int a = 2; a >= 0; a--) {
    uint s = uint(sp[a]);
    pos[a] = r % s;
    r /= s;
  }
  return r;
}

// pool_off is the offset of element (n, pos, ch) of an operand.
inline long pool_off(long off, constant long* st, long n, thread const long* pos, long ch) {
  return off + n * st[0] + pos[0] * st[1] + pos[1] * st[2] + pos[2] * st[3] + ch * st[4];
}

// PoolWin is the part of a window that lies inside the input: on each
// axis the input positions first + [lo, hi).
struct PoolWin {
  long first[3], lo[3], hi[3];
};

inline PoolWin pool_window(constant PoolParams& p, thread const long* o) {
  PoolWin w;
  for (int a = 0; a < 3; a++) {
    w.first[a] = o[a] * p.s[a] - p.p[a];
    w.lo[a] = max64(0, -w.first[a]);
    w.hi[a] = min64(p.k[a], p.in[a] - w.first[a]);
  }
  return w;
}

// go_max is Go's max on compute values: NaN if either is, +0 over -0.
inline float go_max(float a, float b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
template <typename A> inline A go_max(A a, A b) { return a > b ? a : b; }

template <typename T> inline typename Elem<T>::compute pool_lowest() {
  return numeric_limits<typename Elem<T>::compute>::lowest();
}
template <> inline float pool_lowest<float>() { return -INFINITY; }
template <> inline float pool_lowest<half>() { return -INFINITY; }
template <> inline float pool_lowest<bf16_t>() { return -INFINITY; }

// pool_max: the maximum of each window of a; padding never wins.
template <typename T>
kernel void pool_max(device const T* a [[buffer(0)]], device const T* b [[buffer(1)]], device T* out [[buffer(2)]],
                     constant PoolParams& p [[buffer(3)]], uint2 gid [[thread_position_in_grid]]) {
  long ch = gid.x;
  uint r = gid.y;
  if (ch >= p.c || r >= p.rows) return;
  long o[3];
  long n = pool_pos(r, p.out, o);
  PoolWin w = pool_window(p, o);
  typedef typename Elem<T>::compute C;
  C m = pool_lowest<T>();
  bool first = true;
  for (long kd = w.lo[0]; kd < w.hi[0]; kd++) {
    for (long kh = w.lo[1]; kh < w.hi[1]; kh++) {
      for (long kw = w.lo[2]; kw < w.hi[2]; kw++) {
        long pos[3] = {w.first[0] + kd, w.first[1] + kh, w.first[2] + kw};
        C v = Elem<T>::load(elem_read(a + pool_off(p.a_off, p.ast, n, pos, ch)));
        m = first ? v : go_max(m, v);
        first = false;
      }
    }
  }
  elem_write(out + pool_off(p.o_off, p.ost, n, o, ch), Elem<T>::store(m));
}

// pool_avg: each window's sum over the input, divided by the whole
// window's size (padding counts as zeros).
template <typename T>
kernel void pool_avg(device const T* a [[buffer(0)]], device const T* b [[buffer(1)]], device T* out [[buffer(2)]],
                     constant PoolParams& p [[buffer(3)]], uint2 gid [[thread_position_in_grid]]) {
  long ch = gid.x;
  uint r = gid.y;
  if (ch >= p.c || r >= p.rows) return;
  long o[3];
  long n = pool_pos(r, p.out, o);
  PoolWin w = pool_window(p, o);
  float sum = 0.0f;
  for (long kd = w.lo[0]; kd < w.hi[0]; kd++) {
    for (long kh = w.lo[1]; kh < w.hi[1]; kh++) {
      for (long kw = w.lo[2]; kw < w.hi[2]; kw++) {
        long pos[3] = {w.first[0] + kd, w.first[1] + kh, w.first[2] + kw};
        sum += float(Elem<T>::load(a[pool_off(p.a_off, p.ast, n, pos, ch)]));
      }
    }
  }
  out[pool_off(p.o_off, p.ost, n, o, ch)] = Elem<T>::store(sum / float(p.k[0] * p.k[1] * p.k[2]));
}

// pool_covering sets, for input position i, the range [lo, hi) of output
// positions on each axis whose windows hold it.
inline void pool_covering(constant PoolParams& p, thread const long* i, thread long* lo, thread long* hi) {
  for (int a = 0; a < 3; a++) {
    long q = i[a] + p.p[a];
    long l = q - p.k[a] + 1;
    lo[a] = l <= 0 ? 0 : (l + p.s[a] - 1) / p.s[a];
    hi[a] = min64(p.out[a], q / p.s[a] + 1);
  }
}

// pool_avg_grad: out (the pooled input's shape) gets, at each element,
// a's value (the pooled gradient) divided by the window size, summed over
// the windows that hold it in the order of their rows.
template <typename T>
kernel void pool_avg_grad(device const T* a [[buffer(0)]], device const T* b [[buffer(1)]], device T* out [[buffer(2)]],
                          constant PoolParams& p [[buffer(3)]], uint2 gid [[thread_position_in_grid]]) {
  long ch = gid.x;
  uint r = gid.y;
  if (ch >= p.c || r >= p.rows) return;
  long i[3], lo[3], hi[3];
  long n = pool_pos(r, p.in, i);
  pool_covering(p, i, lo, hi);
  float inv = 1.0f / float(p.k[0] * p.k[1] * p.k[2]);
  float sum = 0.0f;
  for (long od = lo[0]; od < hi[0]; od++) {
    for (long oh = lo[1]; oh < hi[1]; oh++) {
      for (long ow = lo[2]; ow < hi[2]; ow++) {
        long o[3] = {od, oh, ow};
        sum += float(Elem<T>::load(a[pool_off(p.a_off, p.ast, n, o, ch)])) * inv;
      }
    }
  }
  out[pool_off(p.o_off, p.ost, n, i, ch)] = Elem<T>::store(sum);
}

// pool_argmax returns the input position of the maximum of a over the
// window of output position o, channel ch: the first on ties, the first
// NaN if there is one (backend/cpu's argmax). It returns false for a
// window with no input element.
template <typename T>
inline bool pool_argmax(device const T* a, constant PoolParams& p, long n, thread const long* o, long ch, thread long* best) {
  PoolWin w = pool_window(p, o);
  float m = 0.0f;
  bool found = false;
  for (long kd = w.lo[0]; kd < w.hi[0]; kd++) {
    for (long kh = w.lo[1]; kh < w.hi[1]; kh++) {
      for (long kw = w.lo[2]; kw < w.hi[2]; kw++) {
        long pos[3] = {w.first[0] + kd, w.first[1] + kh, w.first[2] + kw};
        float v = float(Elem<T>::load(a[pool_off(p.a_off, p.ast, n, pos, ch)]));
        if (!found || v > m || (isnan(v) && !isnan(m))) {
          m = v;
          for (int d = 0; d < 3; d++) best[d] = pos[d];
        }
        found = true;
      }
    }
  }
  return found;
}

// pool_max_gather: b (a's shape) at the maximum of each window of a.
template <typename T>
kernel void pool_max_gather(device const T* a [[buffer(0)]], device const T* b [[buffer(1)]], device T* out [[buffer(2)]],
                            constant PoolParams& p [[buffer(3)]], uint2 gid [[thread_position_in_grid]]) {
  long ch = gid.x;
  uint r = gid.y;
  if (ch >= p.c || r >= p.rows) return;
  long o[3], best[3];
  long n = pool_pos(r, p.out, o);
  T v = Elem<T>::store(0.0f);
  if (pool_argmax(a, p, n, o, ch, best)) v = b[pool_off(p.b_off, p.bst, n, best, ch)];
  out[pool_off(p.o_off, p.ost, n, o, ch)] = v;
}

// pool_max_scatter: out (a's shape) gets at each element the sum of b
// (the pooled gradient) over the windows whose maximum it is, in the order
// of their rows.
template <typename T>
kernel void pool_max_scatter(device const T* a [[buffer(0)]], device const T* b [[buffer(1)]], device T* out [[buffer(2)]],
                             constant PoolParams& p [[buffer(3)]], uint2 gid [[thread_position_in_grid]]) {
  long ch = gid.x;
  uint r = gid.y;
  if (ch >= p.c || r >= p.rows) return;
  long i[3], lo[3], hi[3];
  long n = pool_pos(r, p.in, i);
  pool_covering(p, i, lo, hi);
  float sum = 0.0f;
  for (long od = lo[0]; od < hi[0]; od++) {
    for (long oh = lo[1]; oh < hi[1]; oh++) {
      for (long ow = lo[2]; ow < hi[2]; ow++) {
        long o[3] = {od, oh, ow}, best[3];
        if (pool_argmax(a, p, n, o, ch, best) && best[0] == i[0] && best[1] == i[1] && best[2] == i[2]) {
          sum += float(Elem<T>::load(b[pool_off(p.b_off, p.bst, n, o, ch)]));
        }
      }
    }
  }
  out[pool_off(p.o_off, p.ost, n, i, ch)] = Elem<T>::store(sum);
}

#define instantiate_pool_float(name, type)                                      \
  instantiate_kernel("pool_max_" #name, pool_max, type)                         \
  instantiate_kernel("pool_avg_" #name, pool_avg, type)                         \
  instantiate_kernel("pool_avg_grad_" #name, pool_avg_grad, type)               \
  instantiate_kernel("pool_max_gather_" #name, pool_max_gather, type)           \
  instantiate_kernel("pool_max_scatter_" #name, pool_max_scatter, type)

instantiate_pool_float(float32, float)
instantiate_pool_float(float16, half)
instantiate_pool_float(bfloat16, bf16_t)
instantiate_kernel("pool_max_int8", pool_max, char)
instantiate_kernel("pool_max_int16", pool_max, short)
instantiate_kernel("pool_max_int32", pool_max, int)
instantiate_kernel("pool_max_int64", pool_max, long)
instantiate_kernel("pool_max_uint8", pool_max, uchar)
instantiate_kernel("pool_max_uint16", pool_max, u16_t)
instantiate_kernel("pool_max_uint32", pool_max, uint)
instantiate_kernel("pool_max_uint64", pool_max, ulong)
