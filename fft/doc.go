// Package fft computes discrete Fourier transforms with numpy's
// functions and arguments: FFT, IFFT, RFFT, IRFFT and their 2-D and N-D
// forms, FFTFreq, RFFTFreq, FFTShift and IFFTShift.
//
// The transforms are lazy, like every fathom op, and differentiable (the
// rules are JAX's) and batchable with graph.Vmap; compile.Compile traces
// them as any op. They are built on the primitives ops.FFT, ops.RFFT and
// ops.IRFFT.
//
// Arguments follow numpy, spelled for Go:
//
//   - n (one-axis functions): the number of points; 0 is numpy's None,
//     the axis's length (for IRFFT, 2·(m-1) for m frequencies). A
//     shorter axis is zero-padded, a longer one cropped.
//   - axis: negative counts from the end; numpy's default is -1.
//   - s and axes (2-D and N-D functions): nil is numpy's None. With axes
//     nil, FFT2 and its kin take the last two axes and FFTN the last
//     len(s) axes (every axis if s is nil too). An entry 0 of s takes
//     that axis's length. Repeated axes are refused.
//   - norm: Backward (numpy's default), Ortho or Forward.
//
// Complex results are complex64 and real ones float32, as in MLX: real
// inputs of other dtypes are converted (float64 input gives complex64,
// with float32's precision; fathom has no complex128). numpy computes in
// complex128; fathom's results agree with it to float32's rounding,
// about 1e-7 relative times log2 of the length.
//
// Any length is accepted. On the CPU, lengths whose prime factors are
// below 67 run as Stockham stages, others by Bluestein's algorithm, and
// long vectors in a four-step split over the cores. On the GPU stream
// complex transforms whose lengths have prime factors 2, 3, 5 and 7 run
// as Metal kernels; other lengths, and the real transforms, run the CPU
// kernel on the host with no copy (docs/fft.md).
package fft
