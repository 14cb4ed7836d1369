// want-lint: host-name kernel-return
// want-syntax: ok
//
// One host name given to two instantiations, and a kernel that returns a
// value.

template <typename T>
[[kernel]] void fill_one(device T* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = T(1);
}
instantiate_kernel("fill_one", fill_one, float)
instantiate_kernel("fill_one", fill_one, int)

kernel float value(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  return out[i];
}
register_kernel(value)
