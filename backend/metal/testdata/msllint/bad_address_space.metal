// want-lint: ok
// want-syntax: error "address space"
//
// strided_offset (common.h) takes the layout in the constant address
// space; this kernel has it in a device buffer. The harness erases address
// spaces, so it compiled and ran; Metal refuses it, and so does the
// syntax-only mode, where device and constant are distinct address spaces.

kernel void copy_device_layout(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
                               device const long* p [[buffer(2)]], uint3 gid [[thread_position_in_grid]]) {
  out[strided_offset(p, 1, gid)] = in[strided_offset(p, 0, gid)];
}
register_kernel(copy_device_layout)
