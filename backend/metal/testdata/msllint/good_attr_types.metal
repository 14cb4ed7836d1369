// want-lint: ok
// want-syntax: ok
//
// Built-ins as Metal takes them: one component count for every position
// and size (scalars here, with the index and simdgroup attributes scalar
// too), ushort throughout for a pair.

kernel void scalars(device float* out [[buffer(0)]], uint tg [[threadgroup_position_in_grid]],
                    uint ntg [[threadgroups_per_grid]], uint lid [[thread_position_in_threadgroup]],
                    uint tpg [[threads_per_threadgroup]], uint t [[thread_index_in_threadgroup]],
                    uint sg [[simdgroup_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]]) {
  out[tg * tpg + lid] = float(ntg + t + sg + lane);
}
register_kernel(scalars)

kernel void shorts(device float* out [[buffer(0)]], ushort3 gid [[thread_position_in_grid]],
                   ushort3 gsz [[threads_per_grid]], ushort3 lid [[thread_position_in_threadgroup]]) {
  out[(gid.z * gsz.y + gid.y) * gsz.x + gid.x] = float(lid.x);
}
register_kernel(shorts)
