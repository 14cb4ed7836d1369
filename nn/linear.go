package nn

import (
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/random"
)

// keys splits key into n keys (a nil key draws from the random package's
// global key).
func keys(key *array.Array, n int) []*array.Array {
	ks := random.Split(key, n)
	out := make([]*array.Array, n)
	for i := range out {
		out[i] = ops.Reshape(ops.SliceAxis(ks, 0, ops.R(i, i+1)), 2)
	}
	return out
}

func checkDims(op string, dims ...int) {
	for _, d := range dims {
		if d <= 0 {
			array.Panicf(op, "sizes %v: every size must be positive", dims)
		}
	}
}

// Linear is y = x·Wᵀ + b over the last axis of x (PyTorch's and MLX's
// Linear): Weight is [out, in], Bias [out] or nil.
type Linear struct {
	Weight *array.Array
	Bias   *array.Array `nn:",optional"`
}

// NewLinear returns a float32 Linear from in to out features, its weight
// and bias drawn from key uniformly in ±1/sqrt(in), as PyTorch and MLX
// initialise it; bias false leaves Bias nil. A nil key draws from the
// random package's global key.
func NewLinear(key *array.Array, in, out int, bias bool) *Linear {
	checkDims("nn.NewLinear", in, out)
	w, b := uniformInit(key, 1/math.Sqrt(float64(in)), []int{out, in}, bias)
	return &Linear{Weight: w, Bias: b}
}

// uniformInit draws a float32 weight of shape and, when bias is true, a
// bias [shape[0]] from key uniformly in ±bound: PyTorch's default for
// its linear, bilinear and convolution layers.
func uniformInit(key *array.Array, bound float64, shape []int, bias bool) (w, b *array.Array) {
	ks := keys(key, 2)
	w = random.Uniform(ks[0], -bound, bound, shape, array.Float32)
	if bias {
		b = random.Uniform(ks[1], -bound, bound, shape[:1], array.Float32)
	}
	return w, b
}

// Forward applies the layer to x [..., in], giving [..., out].
func (l *Linear) Forward(x *array.Array) *array.Array {
	const op = "nn.Linear"
	checkSelf(op, l == nil)
	checkIn(op, x)
	if x.Ndim() == 0 || l.Weight == nil || l.Weight.Ndim() != 2 || x.Shape()[x.Ndim()-1] != l.Weight.Shape()[1] {
		array.Panicf(op, "input shape %v does not fit weight shape %v", x.Shape(), shapeOf(l.Weight))
	}
	return addBias(ops.MatMul(x, ops.Transpose(l.Weight)), l.Bias)
}

// shapeOf is a's shape, or nil for a nil array, for error messages.
func shapeOf(a *array.Array) []int {
	if a == nil {
		return nil
	}
	return a.Shape()
}
