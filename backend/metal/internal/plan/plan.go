// Package plan describes GPU work without reference to any device: a
// plan is a list of kernel launches over memory. backend/metal's kernels
// return plans, its host encodes them into Metal command buffers, and the
// MSL harness (internal/mslcpu) runs the same launches on the CPU, so the
// plans are tested on Linux too.
package plan

// Launch is one kernel dispatch.
type Launch struct {
	// Library names the MSL source: an embedded kernels/*.metal file
	// ("unary.metal"), or, for generated kernels, "gen:" and a hash of
	// Source.
	Library string
	// Source is the MSL of the library. Plans leave it empty for the
	// embedded libraries, which the host compiles by name; executors get
	// it filled in.
	Source string
	// Kernel is the [[host_name]] of the kernel function, which encodes
	// its specialisation ("unary_Exp_float32_contig").
	Kernel string
	// Buffers are bound to [[buffer(0)]], [[buffer(1)]], ... in order.
	Buffers []BufArg
	// Params, if not empty, is bound with setBytes at index len(Buffers):
	// a packed little-endian struct that the kernel declares as
	// `constant P& p [[buffer(n)]]`.
	Params []byte
	// Grid is the number of threads (dispatchThreads: non-uniform
	// threadgroups, so kernels need no padding); Group the threadgroup
	// size. Both have every component >= 1.
	Grid, Group [3]int
	// Fit says how the launch adapts when its kernel's pipeline allows
	// fewer threads per threadgroup than Group has (Metal's
	// maxTotalThreadsPerThreadgroup, which depends on the kernel's
	// register use). The zero value, FitNone, makes that an error.
	Fit Fit
}

// Fit is how a launch's geometry follows a smaller threadgroup. The host
// shrinks Group to the pipeline's limit, rounded down to a multiple of
// the SIMD width (32 on Apple GPUs) for the kernels that work on whole
// simdgroups, and recomputes Grid.
type Fit uint8

const (
	// FitNone: the kernel's layout assumes exactly Group (gemm and
	// reduce_cols, whose tiles are 256 threads); a pipeline that allows
	// fewer is an error naming the kernel and the limit.
	FitNone Fit = iota
	// FitThreads: each thread's work depends only on its position in the
	// grid (elementwise, gather, scatter, merge passes, grid-stride
	// loops over threads_per_grid): any group works, and the grid stays.
	// 2-D groups shrink along y first.
	FitThreads
	// FitSimd: one item per simdgroup, by its position in the grid (gemv,
	// the short lines of the line kernels): the group (1-D) becomes a
	// multiple of the SIMD width and the grid is rounded up to whole
	// groups; the kernel ignores simdgroups past its items.
	FitSimd
	// FitGroups: Grid[0] is Grid[0]/Group[0] threadgroups, each taking a
	// share of the work that does not depend on its size (its threads
	// loop with threads_per_threadgroup: the long lines of the line
	// kernels, sort_block). The group (1-D) becomes a multiple of the SIMD
	// width and the grid keeps the number of threadgroups.
	FitGroups
)

func (f Fit) String() string {
	switch f {
	case FitNone:
		return "FitNone"
	case FitThreads:
		return "FitThreads"
	case FitSimd:
		return "FitSimd"
	case FitGroups:
		return "FitGroups"
	}
	return "Fit(?)"
}

// BufArg is a buffer argument: memory and a byte offset into it.
type BufArg struct {
	Mem    Memory
	Offset int
	// Write marks a buffer the kernel writes: the host orders later
	// dispatches that read it after this one (a barrier), and the harness
	// copies it back.
	Write bool
}

// Memory is a block of device-visible memory. On Apple silicon it is a
// shared-storage MTLBuffer whose contents the host reads in place; in the
// harness it is a Go byte slice.
type Memory interface {
	// Bytes returns the memory as seen by the host.
	Bytes() []byte
}

// Executor runs Launches in order. Errors (a kernel that fails to
// compile, a device fault, memory exhaustion) are returned, never
// panicked.
type Executor interface {
	Run(l Launch) error
}
