package ops

import (
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
)

// hadamardPrim computes Scale·H·x for every line x along the last axis,
// H the Sylvester-ordered Hadamard matrix of the line's length.
type hadamardPrim struct{ Scale float64 }

func (p *hadamardPrim) Name() string { return "HadamardTransform" }
func (p *hadamardPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *hadamardPrim) evalCPU(in, out []*array.Array) error {
	return cpu.HadamardTransform(alloc(out[0]), bufOf(in[0]), p.Scale)
}
func (p *hadamardPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.HadamardTransform(o, viewOf(in[0]), p.Scale)
	})
}

// Equivalent compares the scales bit for bit.
func (p *hadamardPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*hadamardPrim)
	return ok && sameFloat(q.Scale, p.Scale)
}

// OutputShapes keeps the shape, whose last axis must still have a length
// that is a power of two.
func (p *hadamardPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	return [][]int{in[0].Shape()}, array.Try(func() { hadamardLength("ops.HadamardTransform", in[0].Shape()) })
}

// VJP transforms the cotangent the same way: H is symmetric, so the
// transpose of x ↦ s·H·x is itself.
func (p *hadamardPrim) VJP(_, _, cots []*array.Array, _ []int) []*array.Array {
	return []*array.Array{hadamard(cots[0], p.Scale)}
}

// JVP transforms the tangent: the map is linear.
func (p *hadamardPrim) JVP(_, _, tans []*array.Array, _ []int) []*array.Array {
	return []*array.Array{hadamard(tans[0], p.Scale)}
}

// Vmap transforms the batch as one array. Only a batch axis in last
// place has to move, since the transform runs along the last axis; a
// batch of 0-d arrays gains a last axis of length 1 to run along.
func (p *hadamardPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	x, ax := in[0], axes[0]
	if x.Ndim() == 1 {
		return []*array.Array{Reshape(hadamard(Reshape(x, x.Dim(0), 1), p.Scale), x.Dim(0))}, []int{0}
	}
	if ax == x.Ndim()-1 {
		x, ax = batchFront(x, ax), 0
	}
	return []*array.Array{hadamard(x, p.Scale)}, []int{ax}
}

// hadamardLength returns the length of shape's last axis (1 for 0-d),
// which must be a power of two.
func hadamardLength(op string, shape []int) int {
	n := 1
	if len(shape) > 0 {
		n = shape[len(shape)-1]
	}
	if n <= 0 || n&(n-1) != 0 {
		array.Panicf(op, "the last axis of shape %v has length %d, which is not a power of two", shape, n)
	}
	return n
}

// HadamardTransform returns the Walsh–Hadamard transform of a along its
// last axis, scaled: scale·H·x for every line x, where H is the
// Sylvester-ordered Hadamard matrix (H₁ = [1], H₂ₙ = [[Hₙ Hₙ] [Hₙ -Hₙ]])
// of the axis's length n, which must be a power of two (MLX's
// hadamard_transform; a 0-d array counts as n = 1). scale is optional and
// defaults to 1/√n, which makes the transform orthonormal and its own
// inverse. A float array keeps its dtype (float16 and bfloat16 compute in
// float32 and round once); integers and bool compute in float32;
// complex64 is refused. The GPU takes float32, float16 and bfloat16.
// Its derivative is the same transform, since H is symmetric.
func HadamardTransform(a *array.Array, scale ...float64) *array.Array {
	const op = "ops.HadamardTransform"
	requireNonNil(op, a)
	if len(scale) > 1 {
		array.Panicf(op, "more than one scale: %v", scale)
	}
	if a.DType() == array.Complex64 {
		array.Panicf(op, "complex64 input of shape %v is not supported", a.Shape())
	}
	n := hadamardLength(op, a.Shape())
	s := 1 / math.Sqrt(float64(n))
	if len(scale) == 1 {
		s = scale[0]
	}
	if !a.DType().IsFloat() {
		a = AsType(a, array.Float32)
	}
	return hadamard(a, s)
}

// hadamard builds the transform of a float array. A line longer than
// the GPU kernel takes is transformed as a matrix of shorter lines,
// rows then columns: the Sylvester matrix of n₁·n₂ is the Kronecker
// product of those of n₁ and n₂. The rows pass scales by 1/√n₂, which
// keeps it orthonormal, so that a 16-bit intermediate does not overflow
// where the result would not: unscaled, a row of ones of 4096 would
// reach 4096 instead of 64.
func hadamard(a *array.Array, scale float64) *array.Array {
	n := hadamardLength("ops.HadamardTransform", a.Shape())
	if stream().Device.Type != array.DeviceGPU || n <= metal.HadamardMaxLength {
		return node(a.Shape(), a.DType(), &hadamardPrim{Scale: scale}, a)
	}
	shape := a.Shape()
	lead := shape[:len(shape)-1]
	m := metal.HadamardMaxLength
	x := Reshape(a, append(append([]int{}, lead...), n/m, m)...)
	r := 1 / math.Sqrt(float64(m))
	x = node(x.Shape(), x.DType(), &hadamardPrim{Scale: r}, x)
	x = hadamard(SwapAxes(x, -1, -2), scale/r)
	return Reshape(SwapAxes(x, -1, -2), shape...)
}
