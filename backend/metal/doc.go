// Package metal is fathom's GPU kernel library for Apple silicon: MSL
// kernels (kernels/*.metal, embedded), plans that turn an operation over
// strided buffers into kernel launches, the generator of one kernel for a
// fused elementwise program, and the host that runs launches on a device.
//
// Like package cpu, it knows nothing of graphs, primitives or autodiff:
// package ops checks shapes and dtypes and calls it. What it checks itself
// is what only the GPU can refuse: float64, which Metal lacks, and device
// failures such as running out of memory.
//
// The host needs macOS, cgo and Metal (darwinkit for setup, a small
// Objective-C shim for each launch). Everywhere else the package builds
// without cgo and Available reports why the GPU cannot run. The plans,
// the kernels' sources and the fused-kernel generator are plain Go and
// text, tested on every platform, where the kernels themselves also run:
// compiled by clang++ and run on the CPU with Metal's grid semantics, they
// are compared with package cpu's (and -tags fathom_mslharness runs the
// ops tests through them; see package mslharness).
// docs/metal.md says what was checked that way and what only a Mac can.
//
// Its kernels are measured through the whole stack, by the GPU
// benchmarks of package bench, which skip where Available fails:
//
//	go test ./bench -run '^$' -bench GPU -count 5
package metal
