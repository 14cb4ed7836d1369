// want-lint: vla
// want-syntax: error "variable length array"
//
// A thread-local array sized by a kernel argument: a variable-length
// array, which C++ compilers accept as an extension and Metal does not.

kernel void window(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                   constant long* p [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  float w[p[0]];
  for (long k = 0; k < p[0]; k++) w[k] = x[i + k];
  float s = 0.0f;
  for (long k = 0; k < p[0]; k++) s += w[k];
  y[i] = s;
}
register_kernel(window)
