package nn

import (
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/random"
)

// Sequential applies its layers in order. Its parameters are named
// "layers.0.weight" and so on, as MLX's Sequential.
type Sequential struct {
	Layers []Layer
}

// NewSequential returns a Sequential of layers.
func NewSequential(layers ...Layer) *Sequential { return &Sequential{Layers: layers} }

// Forward applies the layers to x in order.
func (s *Sequential) Forward(x *array.Array) *array.Array {
	const op = "nn.Sequential"
	checkSelf(op, s == nil)
	for i, l := range s.Layers {
		if l == nil {
			array.Panicf(op, "layer %d is nil", i)
		}
		x = l.Forward(x)
	}
	return x
}

// Dropout zeroes each element of its input with probability P in
// training mode and scales the rest by 1/(1-P); in evaluation mode it
// passes the input through. Each call in training mode splits Key, draws
// its mask from one half and keeps the other as the new Key: Key is
// state, saved with the model, and a compiled training step takes it in
// and gives it back with the parameters (see ValueAndGrad), so every
// replayed step draws a new mask.
type Dropout struct {
	Key      *array.Array `nn:",state,optional"`
	P        float64
	Training bool
}

// NewDropout returns a Dropout of probability p in [0, 1) in training
// mode, its masks drawn from key (nil: a key split from the random
// package's global key).
func NewDropout(key *array.Array, p float64) *Dropout {
	if !(p >= 0 && p < 1) {
		array.Panicf("nn.NewDropout", "probability %v is outside [0, 1)", p)
	}
	if key == nil {
		key = keys(nil, 1)[0]
	}
	return &Dropout{Key: key, P: p, Training: true}
}

// SetTraining switches between training and evaluation.
func (d *Dropout) SetTraining(on bool) { d.Training = on }

// Forward applies dropout to x.
func (d *Dropout) Forward(x *array.Array) *array.Array {
	const op = "nn.Dropout"
	checkSelf(op, d == nil)
	checkIn(op, x)
	if !d.Training || d.P == 0 {
		return x
	}
	if !(d.P > 0 && d.P < 1) {
		array.Panicf(op, "probability %v is outside [0, 1)", d.P)
	}
	if d.Key == nil {
		array.Panicf(op, "nil key")
	}
	ks := keys(d.Key, 2)
	d.Key = ks[0]
	keep := random.Bernoulli(ks[1], 1-d.P, x.Shape())
	return ops.Where(keep, ops.MulScalar(x, 1/(1-d.P)), ops.ZerosLike(x))
}

// Embedding maps integer indices to rows of Weight [count, dims].
type Embedding struct {
	Weight *array.Array
}

// NewEmbedding returns a float32 Embedding of count vectors of dims
// features drawn from a standard normal distribution, as PyTorch's.
func NewEmbedding(key *array.Array, count, dims int) *Embedding {
	checkDims("nn.NewEmbedding", count, dims)
	return &Embedding{Weight: random.Normal(key, []int{count, dims}, array.Float32, 0, 1)}
}

// Forward returns the rows of the indices in idx: idx's shape plus
// [dims]. An index out of range is an error when evaluated.
func (e *Embedding) Forward(idx *array.Array) *array.Array {
	const op = "nn.Embedding"
	checkSelf(op, e == nil)
	checkIn(op, idx)
	if idx.DType().IsInexact() || idx.DType() == array.Bool {
		array.Panicf(op, "indices of shape %v have dtype %v: want an integer dtype", idx.Shape(), idx.DType())
	}
	if e.Weight == nil || e.Weight.Ndim() != 2 {
		array.Panicf(op, "weight shape %v: want [count, dims]", shapeOf(e.Weight))
	}
	return ops.Take(e.Weight, idx, 0)
}

// Bilinear is y = x1ᵀ·W·x2 + b over the last axes (PyTorch's Bilinear):
// Weight is [out, in1, in2] and Bias [out] or nil.
type Bilinear struct {
	Weight *array.Array
	Bias   *array.Array `nn:",optional"`
}

// NewBilinear returns a float32 Bilinear, its weight and bias drawn
// uniformly in ±1/sqrt(in1) as PyTorch's.
func NewBilinear(key *array.Array, in1, in2, out int, bias bool) *Bilinear {
	checkDims("nn.NewBilinear", in1, in2, out)
	w, b := uniformInit(key, 1/math.Sqrt(float64(in1)), []int{out, in1, in2}, bias)
	return &Bilinear{Weight: w, Bias: b}
}

// Forward returns the layer of x1 [..., in1] and x2 [..., in2] (the same
// leading axes): [..., out].
func (l *Bilinear) Forward(x1, x2 *array.Array) *array.Array {
	const op = "nn.Bilinear"
	checkSelf(op, l == nil)
	checkIn(op, x1)
	checkIn(op, x2)
	w := l.Weight
	if w == nil || w.Ndim() != 3 || x1.Ndim() == 0 || x2.Ndim() != x1.Ndim() ||
		x1.Shape()[x1.Ndim()-1] != w.Shape()[1] || x2.Shape()[x2.Ndim()-1] != w.Shape()[2] {
		array.Panicf(op, "inputs of shapes %v and %v do not fit weight shape %v", x1.Shape(), x2.Shape(), shapeOf(w))
	}
	lead := x1.Shape()[:x1.Ndim()-1]
	for i, d := range lead {
		if x2.Shape()[i] != d {
			array.Panicf(op, "inputs of shapes %v and %v: leading axes differ", x1.Shape(), x2.Shape())
		}
	}
	out, in1, in2 := w.Shape()[0], w.Shape()[1], w.Shape()[2]
	// x1·W as one product: W as [in1, out·in2]
	wm := ops.Reshape(ops.Transpose(w, 1, 0, 2), in1, out*in2)
	t := ops.MatMul(ops.Reshape(x1, -1, in1), wm)
	t = ops.Reshape(t, -1, out, in2)
	y := ops.Sum(ops.Mul(t, ops.ExpandDims(ops.Reshape(x2, -1, in2), 1)), -1)
	y = ops.Reshape(y, append(append([]int{}, lead...), out)...)
	return addBias(y, l.Bias)
}

// RoPE is the rotary position embedding layer (MLX's nn.RoPE) over the
// first Dims features of x [..., L, features], one fused primitive
// (ops.RoPE). Traditional pairs neighbouring features; otherwise a
// feature pairs with the one Dims/2 after it. MLX's and most models' Base
// is 10000 and Scale 1.
type RoPE struct {
	Dims        int
	Traditional bool
	Base, Scale float64
}

// Forward rotates x as positions 0, 1, ... along its second-to-last axis.
func (r RoPE) Forward(x *array.Array) *array.Array { return r.ForwardAt(x, 0) }

// ForwardAt rotates x as positions offset, offset+1, ... (for decoding
// with a cache of offset positions).
func (r RoPE) ForwardAt(x *array.Array, offset int) *array.Array {
	checkIn("nn.RoPE", x)
	return ops.RoPE(x, r.Dims, r.Traditional, r.Base, r.Scale, offset)
}
