// want-lint: ok
// want-syntax: error "address space"
//
// A threadgroup array passed to a helper that takes a device pointer.

inline float first(device const float* x) { return x[0]; }

kernel void share(device float* out [[buffer(0)]], uint lid [[thread_position_in_threadgroup]],
                  uint tpg [[threads_per_threadgroup]]) {
  threadgroup float part[32];
  part[lid % 32] = float(lid);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[lid] = first(part);
}
register_kernel(share)
