// Package cpu is fathom's CPU kernel library: operations over raw buffers,
// each a byte slice with a dtype, a shape, strides and an offset (strides
// and offsets count elements; a stride of 0 repeats an element, which is
// how a broadcast input arrives), and the runner of fused elementwise
// programs.
//
// The package knows nothing of graphs, primitives, autodiff or compile:
// package ops checks shapes and dtypes, allocates results and calls the
// kernels. So a kernel can be called, tested and measured on its own,
// over buffers a benchmark or a test makes.
//
// Kernels take fast paths for contiguous data and fall back to general
// strided loops, and split work above a size threshold across GOMAXPROCS
// goroutines. On amd64, matrix products and vector math run Go assembly
// generated with avo (internal/asmgen; go generate ./backend/cpu
// regenerates it) on CPUs with AVX2 and FMA or AVX-512; every other
// architecture, and a build with -tags noasm, runs the pure-Go kernels.
//
// Benchmarks are go test benchmarks, reporting GB/s or GFLOP/s:
//
//	go test ./backend/cpu -run '^$' -bench .
//	go test ./backend/cpu -run '^$' -bench 'Gemm|Softmax' -cpu 1,2
//	go test ./backend/cpu -run '^$' -bench . -tags noasm   # the pure-Go kernels
//
// The same workloads through the whole stack, and against numpy and
// PyTorch, are in package bench; docs/performance.md keeps the figures.
package cpu
