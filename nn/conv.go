package nn

import (
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// Convolution layers hold a weight [out, k..., in/groups] and a bias
// [out] (nil without one), channels last as MLX's: the input is
// [N, spatial..., in] and the result [N, spatial'..., out]. Their
// geometry is in exported fields that are not parameters; a zero Stride
// or Dilation means 1, so a layer built as a struct literal works.

// convInit draws a convolution's weight and bias uniformly in
// ±1/sqrt(fanIn), fanIn = in/groups·kernel size, as PyTorch does.
func convInit(op string, key *array.Array, in, out, groups int, kernel []int, transpose, bias bool) (w, b *array.Array) {
	checkDims(op, append([]int{in, out, groups}, kernel...)...)
	if in%groups != 0 || out%groups != 0 {
		array.Panicf(op, "%d input and %d output channels do not split into %d groups", in, out, groups)
	}
	shape := append(append([]int{out}, kernel...), in/groups)
	fan := in / groups
	if transpose {
		// PyTorch's transposed weight is [in, out/groups, k...]: its fan-in
		// is out/groups·k
		fan = out / groups
	}
	for _, k := range kernel {
		fan *= k
	}
	return uniformInit(key, 1/math.Sqrt(float64(fan)), shape, bias)
}

func one(v int) int { return max(v, 1) }

func ones2(v [2]int) [2]int { return [2]int{one(v[0]), one(v[1])} }

func ones3(v [3]int) [3]int { return [3]int{one(v[0]), one(v[1]), one(v[2])} }

// convCheck checks x for a convolution of spatial rank d over weight w.
func convCheck(op string, x, w *array.Array, d, groups int) {
	checkIn(op, x)
	if w == nil || w.Ndim() != d+2 {
		array.Panicf(op, "weight shape %v: want %d dimensions", shapeOf(w), d+2)
	}
	in := w.Shape()[d+1] * one(groups)
	if x.Ndim() != d+2 || x.Shape()[d+1] != in {
		array.Panicf(op, "input shape %v does not fit weight shape %v (%d groups): want [N, %d spatial axes..., %d]",
			x.Shape(), w.Shape(), one(groups), d, in)
	}
}

func addBias(y, b *array.Array) *array.Array {
	if b == nil {
		return y
	}
	return ops.Add(y, b)
}

// Conv1D is a 1-D convolution over x [N, L, in].
type Conv1D struct {
	Weight                    *array.Array
	Bias                      *array.Array `nn:",optional"`
	Stride, Padding, Dilation int
	Groups                    int
}

// NewConv1D returns a float32 Conv1D from in to out channels with a
// kernel of k, stride 1, no padding and dilation 1; set the fields to
// change them.
func NewConv1D(key *array.Array, in, out, k, groups int, bias bool) *Conv1D {
	w, b := convInit("nn.NewConv1D", key, in, out, groups, []int{k}, false, bias)
	return &Conv1D{Weight: w, Bias: b, Stride: 1, Dilation: 1, Groups: groups}
}

// Forward convolves x.
func (c *Conv1D) Forward(x *array.Array) *array.Array {
	const op = "nn.Conv1D"
	checkSelf(op, c == nil)
	convCheck(op, x, c.Weight, 1, c.Groups)
	return addBias(ops.Conv1D(x, c.Weight, one(c.Stride), c.Padding, one(c.Dilation), one(c.Groups)), c.Bias)
}

// Conv2D is a 2-D convolution over x [N, H, W, in].
type Conv2D struct {
	Weight                    *array.Array
	Bias                      *array.Array `nn:",optional"`
	Stride, Padding, Dilation [2]int
	Groups                    int
}

// NewConv2D returns a float32 Conv2D; see NewConv1D.
func NewConv2D(key *array.Array, in, out int, k [2]int, groups int, bias bool) *Conv2D {
	w, b := convInit("nn.NewConv2D", key, in, out, groups, k[:], false, bias)
	return &Conv2D{Weight: w, Bias: b, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: groups}
}

// Forward convolves x.
func (c *Conv2D) Forward(x *array.Array) *array.Array {
	const op = "nn.Conv2D"
	checkSelf(op, c == nil)
	convCheck(op, x, c.Weight, 2, c.Groups)
	return addBias(ops.Conv2D(x, c.Weight, ones2(c.Stride), c.Padding, ones2(c.Dilation), one(c.Groups)), c.Bias)
}

// Conv3D is a 3-D convolution over x [N, D, H, W, in].
type Conv3D struct {
	Weight                    *array.Array
	Bias                      *array.Array `nn:",optional"`
	Stride, Padding, Dilation [3]int
	Groups                    int
}

// NewConv3D returns a float32 Conv3D; see NewConv1D.
func NewConv3D(key *array.Array, in, out int, k [3]int, groups int, bias bool) *Conv3D {
	w, b := convInit("nn.NewConv3D", key, in, out, groups, k[:], false, bias)
	return &Conv3D{Weight: w, Bias: b, Stride: [3]int{1, 1, 1}, Dilation: [3]int{1, 1, 1}, Groups: groups}
}

// Forward convolves x.
func (c *Conv3D) Forward(x *array.Array) *array.Array {
	const op = "nn.Conv3D"
	checkSelf(op, c == nil)
	convCheck(op, x, c.Weight, 3, c.Groups)
	return addBias(ops.Conv3D(x, c.Weight, ones3(c.Stride), c.Padding, ones3(c.Dilation), one(c.Groups)), c.Bias)
}

// ConvTranspose1D is a transposed 1-D convolution over x [N, L, in]. Its
// weight is [out, k, in/groups], as ops.ConvTranspose1D takes it (PyTorch
// stores it as [in, out/groups, k]).
type ConvTranspose1D struct {
	Weight                                   *array.Array
	Bias                                     *array.Array `nn:",optional"`
	Stride, Padding, Dilation, OutputPadding int
	Groups                                   int
}

// NewConvTranspose1D returns a float32 ConvTranspose1D, drawn as
// PyTorch's; see NewConv1D.
func NewConvTranspose1D(key *array.Array, in, out, k, groups int, bias bool) *ConvTranspose1D {
	w, b := convInit("nn.NewConvTranspose1D", key, in, out, groups, []int{k}, true, bias)
	return &ConvTranspose1D{Weight: w, Bias: b, Stride: 1, Dilation: 1, Groups: groups}
}

// Forward applies the transposed convolution to x.
func (c *ConvTranspose1D) Forward(x *array.Array) *array.Array {
	const op = "nn.ConvTranspose1D"
	checkSelf(op, c == nil)
	convCheck(op, x, c.Weight, 1, c.Groups)
	return addBias(ops.ConvTranspose1D(x, c.Weight, one(c.Stride), c.Padding, one(c.Dilation), c.OutputPadding, one(c.Groups)), c.Bias)
}

// ConvTranspose2D is a transposed 2-D convolution over x [N, H, W, in];
// see ConvTranspose1D.
type ConvTranspose2D struct {
	Weight                                   *array.Array
	Bias                                     *array.Array `nn:",optional"`
	Stride, Padding, Dilation, OutputPadding [2]int
	Groups                                   int
}

// NewConvTranspose2D returns a float32 ConvTranspose2D; see NewConv1D.
func NewConvTranspose2D(key *array.Array, in, out int, k [2]int, groups int, bias bool) *ConvTranspose2D {
	w, b := convInit("nn.NewConvTranspose2D", key, in, out, groups, k[:], true, bias)
	return &ConvTranspose2D{Weight: w, Bias: b, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: groups}
}

// Forward applies the transposed convolution to x.
func (c *ConvTranspose2D) Forward(x *array.Array) *array.Array {
	const op = "nn.ConvTranspose2D"
	checkSelf(op, c == nil)
	convCheck(op, x, c.Weight, 2, c.Groups)
	return addBias(ops.ConvTranspose2D(x, c.Weight, ones2(c.Stride), c.Padding, ones2(c.Dilation), c.OutputPadding, one(c.Groups)), c.Bias)
}

// ConvTranspose3D is a transposed 3-D convolution over x
// [N, D, H, W, in]; see ConvTranspose1D.
type ConvTranspose3D struct {
	Weight                                   *array.Array
	Bias                                     *array.Array `nn:",optional"`
	Stride, Padding, Dilation, OutputPadding [3]int
	Groups                                   int
}

// NewConvTranspose3D returns a float32 ConvTranspose3D; see NewConv1D.
func NewConvTranspose3D(key *array.Array, in, out int, k [3]int, groups int, bias bool) *ConvTranspose3D {
	w, b := convInit("nn.NewConvTranspose3D", key, in, out, groups, k[:], true, bias)
	return &ConvTranspose3D{Weight: w, Bias: b, Stride: [3]int{1, 1, 1}, Dilation: [3]int{1, 1, 1}, Groups: groups}
}

// Forward applies the transposed convolution to x.
func (c *ConvTranspose3D) Forward(x *array.Array) *array.Array {
	const op = "nn.ConvTranspose3D"
	checkSelf(op, c == nil)
	convCheck(op, x, c.Weight, 3, c.Groups)
	return addBias(ops.ConvTranspose3D(x, c.Weight, ones3(c.Stride), c.Padding, ones3(c.Dilation), c.OutputPadding, one(c.Groups)), c.Bias)
}
