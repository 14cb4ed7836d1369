// want-lint: ok
// want-syntax: error "call to deleted function 'min'"
//
// Metal's min and max take no 64-bit integers (reduce.metal and sort.metal
// used them before issue 24); min64 and max64 of common.h do. The harness
// refuses the call too, in both of its modes.

kernel void clamp_index(device long* x [[buffer(0)]], constant long* p [[buffer(1)]],
                        uint i [[thread_position_in_grid]]) {
  x[i] = min(x[i], p[0]);
}
register_kernel(clamp_index)
