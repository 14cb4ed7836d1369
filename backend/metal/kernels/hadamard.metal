// hadamard.metal: the fast Walsh–Hadamard transform along the last axis,
// in place (see hadamard.go). Host names: hadamard_<dtype> for float32,
// float16 and bfloat16.
// Buffers: [[buffer(0)]] x (row-major lines of n elements, written in
// place), [[buffer(1)]] HadamardParams.

struct HadamardParams {
  long n, lines, scale_bits, off;
};

// hadamard_lines: each threadgroup takes lines tg, tg + ntg, ...; a line
// is widened into threadgroup memory, goes through log2(n) passes of
// n/2 butterflies (pair k of the pass of span h is i = (k / h)·2h + k % h
// and i + h), and is scaled and rounded once on store. The barriers
// depend only on tg and n, so every thread of a group reaches each one.
template <typename T>
[[kernel, max_total_threads_per_threadgroup(256)]] void hadamard_lines(
    device T* x [[buffer(0)]], constant HadamardParams& p [[buffer(1)]],
    uint tg [[threadgroup_position_in_grid]], uint ntg [[threadgroups_per_grid]],
    uint lid [[thread_index_in_threadgroup]], uint tpg [[threads_per_threadgroup]]) {
  threadgroup float buf[4096];
  float scale = as_type<float>(uint(p.scale_bits));
  long n = p.n;
  for (long l = tg; l < p.lines; l += ntg) {
    device T* line = x + p.off + l * n;
    for (long i = lid; i < n; i += tpg) buf[i] = float(Elem<T>::load(line[i]));
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (long h = 1; h < n; h *= 2) {
      for (long k = lid; k < n / 2; k += tpg) {
        long i = (k / h) * 2 * h + k % h;
        float a = buf[i], b = buf[i + h];
        buf[i] = a + b;
        buf[i + h] = a - b;
      }
      threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    for (long i = lid; i < n; i += tpg) line[i] = Elem<T>::store(typename Elem<T>::compute(buf[i] * scale));
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
}

instantiate_kernel("hadamard_float32", hadamard_lines, float)
instantiate_kernel("hadamard_float16", hadamard_lines, half)
instantiate_kernel("hadamard_bfloat16", hadamard_lines, bf16_t)
