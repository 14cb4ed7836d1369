// want-lint: max-threads
// want-syntax: ok
//
// No Apple GPU runs 2048 threads in a threadgroup: Metal refuses the
// pipeline.

template <typename T>
[[kernel, max_total_threads_per_threadgroup(2048)]] void wide(device T* out [[buffer(0)]],
                                                              uint i [[thread_position_in_grid]]) {
  out[i] = T(i);
}
instantiate_kernel("wide_float32", wide, float)
