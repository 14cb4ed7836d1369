// want-lint: attr-pair-type attr-scalar attr-type attr-unknown
// want-syntax: ok
//
// Built-in attributes of types Metal refuses: a size of another type than
// its position (ushort2 with uint2), a vector thread_index_in_threadgroup,
// a signed position, a misspelt attribute. The harness converts every
// built-in to the parameter's type, so all of these ran there.

template <typename T>
[[kernel]] void pair_type(device T* out [[buffer(0)]], ushort2 gid [[thread_position_in_grid]],
                          uint2 gsz [[threads_per_grid]]) {
  out[gid.y * gsz.x + gid.x] = T(1);
}

template <typename T>
[[kernel]] void vector_index(device T* out [[buffer(0)]], uint2 lid [[thread_index_in_threadgroup]]) {
  out[lid.x] = T(1);
}

template <typename T>
[[kernel]] void signed_position(device T* out [[buffer(0)]], int gid [[thread_position_in_grid]]) {
  out[gid] = T(1);
}

template <typename T>
[[kernel]] void misspelt(device T* out [[buffer(0)]], uint gid [[thread_position_in_grd]]) {
  out[gid] = T(1);
}

instantiate_kernel("pair_type_float32", pair_type, float)
instantiate_kernel("vector_index_float32", vector_index, float)
instantiate_kernel("signed_position_float32", signed_position, float)
instantiate_kernel("misspelt_float32", misspelt, float)
