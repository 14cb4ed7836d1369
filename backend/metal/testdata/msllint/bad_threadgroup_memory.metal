// want-lint: threadgroup-memory
// want-syntax: ok
//
// 64 x 80 elements of threadgroup memory: 20 KB for float, which fits, but
// 40 KB for long, which no Apple GPU has (32 KB). The lint sizes every
// instantiation; Metal refuses the library.

template <typename T>
[[kernel]] void tile(device T* out [[buffer(0)]], uint2 lid [[thread_position_in_threadgroup]],
                     uint2 tpg [[threads_per_threadgroup]]) {
  threadgroup T t[64][80];
  t[lid.y][lid.x] = T(lid.x);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[lid.y * tpg.x + lid.x] = t[lid.x % 64][lid.y % 80];
}

instantiate_kernel("tile_float32", tile, float)
instantiate_kernel("tile_int64", tile, long)
