// want-lint: double
// want-syntax: error "poisoned identifier"
//
// Metal has no double. The harness compiles it as C++ and runs it.

kernel void halve(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  double h = 0.5;
  x[i] = float(x[i] * h);
}
register_kernel(halve)
