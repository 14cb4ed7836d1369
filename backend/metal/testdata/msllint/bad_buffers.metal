// want-lint: buffers
// want-syntax: ok
//
// Buffer indices Metal has not: [[buffer(31)]] (the 32nd argument; indices
// are 0 to 30) and one index bound twice.

#define ARG(n) device float* b##n [[buffer(n)]],
kernel void too_many(ARG(0) ARG(1) ARG(2) ARG(3) ARG(4) ARG(5) ARG(6) ARG(7) ARG(8) ARG(9) ARG(10) ARG(11)
                     ARG(12) ARG(13) ARG(14) ARG(15) ARG(16) ARG(17) ARG(18) ARG(19) ARG(20) ARG(21) ARG(22)
                     ARG(23) ARG(24) ARG(25) ARG(26) ARG(27) ARG(28) ARG(29) ARG(30) ARG(31)
                     uint i [[thread_position_in_grid]]) {
  b31[i] = b0[i];
}
register_kernel(too_many)

kernel void twice(device float* x [[buffer(0)]], device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  y[i] = x[i];
}
register_kernel(twice)
