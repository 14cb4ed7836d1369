// Package ops defines fathom's operations and their primitives.
//
// Each exported function (Add, Sum, Reshape, MatMul, ...) checks its
// arguments, works out the result's shape and dtype, and records a node
// in the lazy graph; nothing is computed until the result is evaluated.
//
// Each family of operations has one file (unary.go, binary.go,
// reduce.go, ...), and in it each primitive sits next to the functions
// that record it, with all it has: its CPU and GPU kernels (evalCPU over
// backend/cpu, evalGPU over backend/metal), its shape rule for shapeless
// compilation (OutputShapes), its derivative rules (VJP, JVP) and its
// batching rule (Vmap). ops.go dispatches to the kernels; gpu.go and
// rules.go hold what kernels and rules share. The primitive types are
// unexported except the elementwise ones that package compile fuses
// (Unary, Binary, WherePrim, AsTypePrim).
//
// Broadcasting follows numpy: shapes are aligned at their last axis, and
// an axis of size 1 (or a missing one) stretches to match. Binary
// operations promote dtypes as numpy and MLX do (int32+float32 gives
// float32, float16+float32 gives float32, bool+int32 gives int32). Go
// scalars passed to the ...Scalar functions are weakly typed: the result
// keeps the array's dtype, except that a scalar with a fraction turns an
// integer or bool array's result into float32, as in MLX.
//
// Axes may be negative, counting from the end; reductions given no axes
// reduce over all of them. To keep reduced axes as size 1, wrap the
// reduction in KeepDims.
//
// Every function panics with *array.Error on bad input, naming the
// operation and the shapes, axes or dtypes involved.
package ops
