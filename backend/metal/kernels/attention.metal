// attention.metal: scaled dot-product attention and its backward pass
// (see attention.go), as backend/cpu's attention.go computes them: the
// forward keeps a running maximum and sum (online softmax) and writes
// each query's log-sum-exp, from which the backward recomputes the
// probabilities. Host names: attention_float32, attention_dq_float32 and
// attention_dkv_float32 (ops converts float16 and bfloat16 operands to
// float32 first).
// Buffers: [[buffer(0)]] q, [[buffer(1)]] k, [[buffer(2)]] v,
// [[buffer(3)]] a boolean mask, [[buffer(4)]] an additive mask (q where
// there is none), then the forward's outputs out and lse, or the
// backward's inputs out, lse and the cotangent g followed by its outputs
// (dq; or dk and dv), then AttnParams.

// AttnParams: q is [b, hq, l, d], k [b, hk, s, d], v [b, hk, s, dv]; each
// operand is given by its offset from its bound buffer and its strides.
// The mask is viewed as [b, hq, l, s] (broadcast axes have stride 0);
// mask_kind is 0 (none), 1 (boolean, true keeps) or 2 (additive). causal
// masks key j for query i unless j <= i + s - l. scale is a float's bits.
struct AttnParams {
  long b, hq, hk, l, s, d, dv;
  long q_off, qst[4], k_off, kst[4], v_off, vst[4];
  long m_off, mst[4], mask_kind, causal, scale;
  long o_off, ost[4], lse_off, lst[3], g_off, gst[4];
};

// Each lane holds elements lane, lane + 32, ... of a row of up to
// ATTN_MAX_HEAD elements.
#define ATTN_MAX_HEAD 256
#define ATTN_PER_LANE (ATTN_MAX_HEAD / 32)

// attn_score is the scaled, masked score of query i of head (bb, h) for
// key j, given the lanes' parts of q's row (qv); -INFINITY where masked.
inline float attn_score(constant AttnParams& p, device const float* k, device const bool* mb, device const float* mf,
                        thread const float* qv, long bb, long h, long i, long j, uint lane) {
  if (p.causal && j > i + p.s - p.l) return -INFINITY;
  long m = p.m_off + bb * p.mst[0] + h * p.mst[1] + i * p.mst[2] + j * p.mst[3];
  if (p.mask_kind == 1 && !mb[m]) return -INFINITY;
  long hk = h / (p.hq / p.hk);
  device const float* kr = k + p.k_off + bb * p.kst[0] + hk * p.kst[1] + j * p.kst[2];
  float acc = 0.0f;
  for (int t = 0; t < ATTN_PER_LANE; t++) {
    long c = long(lane) + 32 * t;
    if (c < p.d) acc += qv[t] * kr[c * p.kst[3]];
  }
  float sc = simd_sum(acc) * as_type<float>(uint(p.scale));
  if (p.mask_kind == 2) sc += mf[m];
  return sc;
}

// attn_dot is the dot product of the lanes' parts a with the row r of n
// elements stride st apart, over the simdgroup.
inline float attn_dot(thread const float* a, device const float* r, long n, long st, uint lane) {
  float acc = 0.0f;
  for (int t = 0; t < ATTN_PER_LANE; t++) {
    long c = long(lane) + 32 * t;
    if (c < n) acc += a[t] * r[c * st];
  }
  return simd_sum(acc);
}

// attn_load loads the lanes' parts of the row r of n elements.
inline void attn_load(thread float* a, device const float* r, long n, long st, uint lane) {
  for (int t = 0; t < ATTN_PER_LANE; t++) {
    long c = long(lane) + 32 * t;
    a[t] = c < n ? r[c * st] : 0.0f;
  }
}

// attention_rows: a simdgroup per query (b, h, i), over every key.
template <typename T>
[[kernel]] void attention_rows(
    device const T* q [[buffer(0)]], device const T* k [[buffer(1)]], device const T* v [[buffer(2)]],
    device const bool* mb [[buffer(3)]], device const T* mf [[buffer(4)]], device T* out [[buffer(5)]],
    device T* lse [[buffer(6)]], constant AttnParams& p [[buffer(7)]],
    uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
  long row = long(gid / 32);
  if (row >= p.b * p.hq * p.l) return;
  long i = row % p.l, h = row / p.l % p.hq, bb = row / (p.l * p.hq);
  long hk = h / (p.hq / p.hk);
  float qv[ATTN_PER_LANE], acc[ATTN_PER_LANE];
  attn_load(qv, q + p.q_off + bb * p.qst[0] + h * p.qst[1] + i * p.qst[2], p.d, p.qst[3], lane);
  for (int t = 0; t < ATTN_PER_LANE; t++) acc[t] = 0.0f;
  float m = -INFINITY, l = 0.0f;
  for (long j = 0; j < p.s; j++) {
    float sc = attn_score(p, k, mb, mf, qv, bb, h, i, j, lane);
    float mn = max(m, sc);
    if (isnan(sc)) mn = sc;
    if (mn == -INFINITY) continue;
    float alpha = exp(m - mn), e = exp(sc - mn);
    l = l * alpha + e;
    m = mn;
    device const T* vr = v + p.v_off + bb * p.vst[0] + hk * p.vst[1] + j * p.vst[2];
    for (int t = 0; t < ATTN_PER_LANE; t++) {
      long c = long(lane) + 32 * t;
      if (c < p.dv) acc[t] = acc[t] * alpha + e * vr[c * p.vst[3]];
    }
  }
  device T* o = out + row * p.dv;
  for (int t = 0; t < ATTN_PER_LANE; t++) {
    long c = long(lane) + 32 * t;
    if (c < p.dv) o[c] = l == 0.0f ? NAN : acc[t] / l;
  }
  if (lane == 0) lse[row] = l == 0.0f ? NAN : m + log(l);
}

// attention_dq_rows: a simdgroup per query, over every key: dq =
// scale·Σ_j p_j·(g·v_j - g·out)·k_j with p_j = exp(score_j - lse).
template <typename T>
[[kernel]] void attention_dq_rows(
    device const T* q [[buffer(0)]], device const T* k [[buffer(1)]], device const T* v [[buffer(2)]],
    device const bool* mb [[buffer(3)]], device const T* mf [[buffer(4)]], device const T* out [[buffer(5)]],
    device const T* lse [[buffer(6)]], device const T* g [[buffer(7)]], device T* dq [[buffer(8)]],
    constant AttnParams& p [[buffer(9)]],
    uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
  long row = long(gid / 32);
  if (row >= p.b * p.hq * p.l) return;
  long i = row % p.l, h = row / p.l % p.hq, bb = row / (p.l * p.hq);
  long hk = h / (p.hq / p.hk);
  float qv[ATTN_PER_LANE], gv[ATTN_PER_LANE], acc[ATTN_PER_LANE];
  attn_load(qv, q + p.q_off + bb * p.qst[0] + h * p.qst[1] + i * p.qst[2], p.d, p.qst[3], lane);
  attn_load(gv, g + p.g_off + bb * p.gst[0] + h * p.gst[1] + i * p.gst[2], p.dv, p.gst[3], lane);
  for (int t = 0; t < ATTN_PER_LANE; t++) acc[t] = 0.0f;
  float delta = attn_dot(gv, out + p.o_off + bb * p.ost[0] + h * p.ost[1] + i * p.ost[2], p.dv, p.ost[3], lane);
  float ls = lse[p.lse_off + bb * p.lst[0] + h * p.lst[1] + i * p.lst[2]];
  for (long j = 0; j < p.s; j++) {
    float sc = attn_score(p, k, mb, mf, qv, bb, h, i, j, lane);
    if (sc == -INFINITY) continue;
    float pr = exp(sc - ls);
    float dp = attn_dot(gv, v + p.v_off + bb * p.vst[0] + hk * p.vst[1] + j * p.vst[2], p.dv, p.vst[3], lane);
    float ds = pr * (dp - delta);
    device const T* kr = k + p.k_off + bb * p.kst[0] + hk * p.kst[1] + j * p.kst[2];
    for (int t = 0; t < ATTN_PER_LANE; t++) {
      long c = long(lane) + 32 * t;
      if (c < p.d) acc[t] += ds * kr[c * p.kst[3]];
    }
  }
  float scale = as_type<float>(uint(p.scale));
  device T* o = dq + row * p.d;
  for (int t = 0; t < ATTN_PER_LANE; t++) {
    long c = long(lane) + 32 * t;
    if (c < p.d) o[c] = acc[t] * scale;
  }
}

// attention_dkv_rows: a simdgroup per key (b, hk, j), over every query of
// the heads that read it: dv = Σ p·g and dk = scale·Σ p·(g·v - g·out)·q.
template <typename T>
[[kernel]] void attention_dkv_rows(
    device const T* q [[buffer(0)]], device const T* k [[buffer(1)]], device const T* v [[buffer(2)]],
    device const bool* mb [[buffer(3)]], device const T* mf [[buffer(4)]], device const T* out [[buffer(5)]],
    device const T* lse [[buffer(6)]], device const T* g [[buffer(7)]], device T* dk [[buffer(8)]],
    device T* dv [[buffer(9)]], constant AttnParams& p [[buffer(10)]],
    uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
  long row = long(gid / 32);
  if (row >= p.b * p.hk * p.s) return;
  long j = row % p.s, hk = row / p.s % p.hk, bb = row / (p.s * p.hk);
  long group = p.hq / p.hk;
  float vv[ATTN_PER_LANE], kacc[ATTN_PER_LANE], vacc[ATTN_PER_LANE], qv[ATTN_PER_LANE];
  attn_load(vv, v + p.v_off + bb * p.vst[0] + hk * p.vst[1] + j * p.vst[2], p.dv, p.vst[3], lane);
  for (int t = 0; t < ATTN_PER_LANE; t++) kacc[t] = vacc[t] = 0.0f;
  for (long h = hk * group; h < (hk + 1) * group; h++) {
    for (long i = 0; i < p.l; i++) {
      device const T* qr = q + p.q_off + bb * p.qst[0] + h * p.qst[1] + i * p.qst[2];
      attn_load(qv, qr, p.d, p.qst[3], lane);
      float sc = attn_score(p, k, mb, mf, qv, bb, h, i, j, lane);
      if (sc == -INFINITY) continue;
      float pr = exp(sc - lse[p.lse_off + bb * p.lst[0] + h * p.lst[1] + i * p.lst[2]]);
      device const T* gr = g + p.g_off + bb * p.gst[0] + h * p.gst[1] + i * p.gst[2];
      float dp = attn_dot(vv, gr, p.dv, p.gst[3], lane);
      device const T* orow = out + p.o_off + bb * p.ost[0] + h * p.ost[1] + i * p.ost[2];
      float delta = 0.0f;
      for (int t = 0; t < ATTN_PER_LANE; t++) {
        long c = long(lane) + 32 * t;
        if (c < p.dv) {
          float gc = gr[c * p.gst[3]];
          delta += gc * orow[c * p.ost[3]];
          vacc[t] += pr * gc;
        }
      }
      float ds = pr * (dp - simd_sum(delta));
      for (int t = 0; t < ATTN_PER_LANE; t++) kacc[t] += ds * qv[t];
    }
  }
  float scale = as_type<float>(uint(p.scale));
  device T* ko = dk + row * p.d;
  device T* vo = dv + row * p.dv;
  for (int t = 0; t < ATTN_PER_LANE; t++) {
    long c = long(lane) + 32 * t;
    if (c < p.d) ko[c] = kacc[t] * scale;
    if (c < p.dv) vo[c] = vacc[t];
  }
}

instantiate_kernel("attention_float32", attention_rows, float)
instantiate_kernel("attention_dq_float32", attention_dq_rows, float)
instantiate_kernel("attention_dkv_float32", attention_dkv_rows, float)
