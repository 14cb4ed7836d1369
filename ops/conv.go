package ops

import (
	"fmt"
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
)

// maxConvDims is the number of spatial axes a convolution may have, as
// in MLX.
const maxConvDims = 3

// convParams are a convolution's parameters on its nd spatial axes, in
// fixed arrays so that primitives compare with ==. Padding may be
// negative inside the derivative rules, where it crops.
type convParams struct {
	nd                         int
	stride, lo, hi, kdil, idil [maxConvDims]int
	groups                     int
	flip                       bool
}

func (p convParams) cpu() cpu.ConvParams {
	n := p.nd
	return cpu.ConvParams{
		Stride: slices.Clone(p.stride[:n]), PadLo: slices.Clone(p.lo[:n]), PadHi: slices.Clone(p.hi[:n]),
		KernelDilation: slices.Clone(p.kdil[:n]), InputDilation: slices.Clone(p.idil[:n]),
		Groups: p.groups, Flip: p.flip,
	}
}

func (p convParams) String() string {
	n := p.nd
	return fmt.Sprintf("stride %v, padding %v/%v, kernel dilation %v, input dilation %v, groups %d",
		p.stride[:n], p.lo[:n], p.hi[:n], p.kdil[:n], p.idil[:n], p.groups)
}

// convShape returns the shape of conv(x, w) with p, or why there is none.
func convShape(xs, ws []int, p convParams) ([]int, string) {
	nd := p.nd
	if len(xs) != nd+2 || len(ws) != nd+2 {
		return nil, fmt.Sprintf("input shape %v and weight shape %v: want %d dimensions each (batch, %d spatial, channels)", xs, ws, nd+2, nd)
	}
	cin, cout := xs[nd+1], ws[0]
	if p.groups < 1 {
		return nil, fmt.Sprintf("input shape %v and weight shape %v: groups %d is not positive", xs, ws, p.groups)
	}
	if cin%p.groups != 0 || cout%p.groups != 0 {
		return nil, fmt.Sprintf("input shape %v and weight shape %v: groups %d does not divide the input channels %d and output channels %d", xs, ws, p.groups, cin, cout)
	}
	if ws[nd+1] != cin/p.groups {
		return nil, fmt.Sprintf("input shape %v and weight shape %v: the weight has %d input channels, want %d (input channels %d / groups %d)", xs, ws, ws[nd+1], cin/p.groups, cin, p.groups)
	}
	out := make([]int, nd+2)
	out[0], out[nd+1] = xs[0], cout
	for i := range nd {
		if p.stride[i] < 1 || p.kdil[i] < 1 || p.idil[i] < 1 {
			return nil, fmt.Sprintf("input shape %v and weight shape %v: strides %v and dilations %v, %v must be positive", xs, ws, p.stride[:nd], p.kdil[:nd], p.idil[:nd])
		}
		in, k := xs[i+1], ws[i+1]
		if k == 0 {
			return nil, fmt.Sprintf("input shape %v and weight shape %v: the kernel is empty on spatial axis %d", xs, ws, i)
		}
		span := p.lo[i] + p.hi[i] - (k-1)*p.kdil[i]
		if in > 0 {
			span += (in-1)*p.idil[i] + 1
		}
		if span < 1 && in > 0 {
			return nil, fmt.Sprintf("input shape %v and weight shape %v: with %v the kernel (%d, dilated to %d) is larger than the padded input (%d) on spatial axis %d", xs, ws, p, k, (k-1)*p.kdil[i]+1, (in-1)*p.idil[i]+1+p.lo[i]+p.hi[i], i)
		}
		if in > 0 {
			out[i+1] = (span-1)/p.stride[i] + 1
		}
	}
	return out, ""
}

// convPrim is MLX's conv_general: a channels-last convolution with
// strides, per-side padding, kernel and input dilation, groups and an
// optional mirrored kernel.
type convPrim struct{ p convParams }

func (c *convPrim) Name() string { return "Conv" }
func (c *convPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(c, s, in, out)
}
func (c *convPrim) evalCPU(in, out []*array.Array) error {
	return cpu.Conv(alloc(out[0]), bufOf(in[0]), bufOf(in[1]), c.p.cpu())
}

func (c *convPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return convGPU(s, in, out, c.p)
}
func (c *convPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*convPrim)
	return ok && q.p == c.p
}

// OutputShapes applies the convolution's shape rule to new input shapes.
func (c *convPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	s, why := convShape(in[0].Shape(), in[1].Shape(), c.p)
	if why != "" {
		return nil, array.Errorf("ops.Conv", "%s", why)
	}
	return [][]int{s}, nil
}

// convNode records conv(x, w) with p, panicking with *array.Error named
// op on shapes or dtypes that do not fit.
func convNode(op string, x, w *array.Array, p convParams) *array.Array {
	requireNonNil(op, x, w)
	shape, why := convShape(x.Shape(), w.Shape(), p)
	if why != "" {
		array.Panicf(op, "%s", why)
	}
	dt := array.Promote(x.DType(), w.DType())
	if !dt.IsFloat() {
		array.Panicf(op, "input shape %v of %v and weight shape %v of %v: convolution needs floating-point arrays", x.Shape(), x.DType(), w.Shape(), w.DType())
	}
	if _, prob := sizeProblem(shape, dt); prob != "" {
		array.Panicf(op, "input shape %v and weight shape %v give shape %v, which %s", x.Shape(), w.Shape(), shape, prob)
	}
	return node(shape, dt, &convPrim{p: p}, AsType(x, dt), AsType(w, dt))
}

// VJP: the input's cotangent is the output's convolved with the kernel
// mirrored and its channel axes swapped (a transposed convolution), and
// the weight's is convWGradPrim's product of the output's cotangent with
// the input's patches.
func (c *convPrim) VJP(in, _, cots []*array.Array, argnums []int) []*array.Array {
	x, w, g := in[0], in[1], cots[0]
	p := c.p
	nd := p.nd
	xs, ws, gs := x.Shape(), w.Shape(), g.Shape()
	cin, cout, groups := xs[nd+1], ws[0], p.groups
	cig, cog := cin/groups, cout/groups
	kern := ws[1 : nd+1]
	out := make([]*array.Array, len(argnums))
	empty := g.Size() == 0 || x.Size() == 0
	for i, j := range argnums {
		if empty {
			out[i] = ZerosLike(in[j])
			continue
		}
		if j == 0 {
			// w as [C_in, kernel..., C_out/groups], group by group.
			wt := Reshape(w, append(append([]int{groups, cog}, kern...), cig)...)
			perm := []int{0, nd + 2}
			for a := range nd {
				perm = append(perm, a+2)
			}
			perm = append(perm, 1)
			wt = Reshape(Transpose(wt, perm...), append(append([]int{cin}, kern...), cog)...)
			q := convParams{nd: nd, groups: groups, flip: !p.flip}
			for a := range nd {
				q.stride[a], q.kdil[a], q.idil[a] = p.idil[a], p.kdil[a], p.stride[a]
				q.lo[a] = p.kdil[a]*(kern[a]-1) - p.lo[a]
				q.hi[a] = (xs[a+1]-1)*p.idil[a] - (gs[a+1]-1)*p.stride[a] + p.lo[a]
			}
			out[i] = convNode("ops.Conv", g, wt, q)
			continue
		}
		out[i] = convWeightGrad(x, g, p, ws)
	}
	return out
}

// JVP: a convolution is linear in each argument.
func (c *convPrim) JVP(in, _, tans []*array.Array, argnums []int) []*array.Array {
	var out *array.Array
	for i, j := range argnums {
		var t *array.Array
		if j == 0 {
			t = convNode("ops.Conv", tans[i], in[1], c.p)
		} else {
			t = convNode("ops.Conv", in[0], tans[i], c.p)
		}
		if out == nil {
			out = t
		} else {
			out = Add(out, t)
		}
	}
	return []*array.Array{out}
}

// Vmap folds a batched input's batch into N when the weight is shared;
// a batched weight is a different convolution per batch element, done
// one at a time and stacked.
func (c *convPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	x, w := batchFront(in[0], axes[0]), batchFront(in[1], axes[1])
	if axes[1] < 0 {
		xs := x.Shape()
		y := convNode("ops.Conv", Reshape(x, append([]int{xs[0] * xs[1]}, xs[2:]...)...), w, c.p)
		return []*array.Array{Reshape(y, append([]int{xs[0], xs[1]}, y.Shape()[1:]...)...)}, []int{0}
	}
	b := w.Shape()[0]
	if b == 0 {
		xs := x.Shape()
		if axes[0] >= 0 {
			xs = xs[1:]
		}
		shape, _ := convShape(xs, w.Shape()[1:], c.p)
		return []*array.Array{Zeros(append([]int{0}, shape...), w.DType())}, []int{0}
	}
	ys := make([]*array.Array, b)
	for i := range b {
		xi := x
		if axes[0] >= 0 {
			xi = Squeeze(SliceAxis(x, 0, R(i, i+1)), 0)
		}
		ys[i] = convNode("ops.Conv", xi, Squeeze(SliceAxis(w, 0, R(i, i+1)), 0), c.p)
	}
	return []*array.Array{Stack(ys, 0)}, []int{0}
}

// convArgs builds the parameters of a public convolution op from its
// per-axis arguments, which must be nd long (empty ones take their
// defaults: stride and dilations 1, padding 0).
func convArgs(op string, x, w *array.Array, nd int, stride, lo, hi, kdil, idil []int, groups int, flip bool) convParams {
	requireNonNil(op, x, w)
	if nd < 1 || nd > maxConvDims {
		array.Panicf(op, "input shape %v and weight shape %v: %d spatial axes, want 1 to %d", x.Shape(), w.Shape(), nd, maxConvDims)
	}
	p := convParams{nd: nd, groups: groups, flip: flip}
	fill := func(name string, dst *[maxConvDims]int, v []int, def, least int) {
		if len(v) == 0 {
			for i := range nd {
				dst[i] = def
			}
			return
		}
		if len(v) != nd {
			array.Panicf(op, "input shape %v and weight shape %v: %s %v has %d values, want one for each of %d spatial axes", x.Shape(), w.Shape(), name, v, len(v), nd)
		}
		for i, d := range v {
			if d < least {
				array.Panicf(op, "input shape %v and weight shape %v: %s %v must be at least %d", x.Shape(), w.Shape(), name, v, least)
			}
			dst[i] = d
		}
	}
	fill("stride", &p.stride, stride, 1, 1)
	fill("padding", &p.lo, lo, 0, 0)
	fill("padding", &p.hi, hi, 0, 0)
	fill("kernel dilation", &p.kdil, kdil, 1, 1)
	fill("input dilation", &p.idil, idil, 1, 1)
	return p
}

// ConvGeneral is MLX's conv_general, channels last: x is [N, ...spatial,
// C_in] and w is [C_out, ...kernel, C_in/groups] with one to three
// spatial axes, and the result is [N, ...out, C_out]. Along each spatial
// axis the input is dilated by inputDilation (inputDilation-1 zeros
// between elements), padded by paddingLo before and paddingHi after, and
// the kernel, dilated by kernelDilation, slides over it with stride; flip
// mirrors the kernel (a true convolution rather than a correlation).
// Empty per-axis slices take the defaults: stride and dilations 1,
// padding 0. Input channels are split into groups, each convolved with
// its own C_out/groups filters. Float dtypes only; float16 and bfloat16
// accumulate in float32 (on the GPU too, where float64 is an error).
func ConvGeneral(x, w *array.Array, stride, paddingLo, paddingHi, kernelDilation, inputDilation []int, groups int, flip bool) *array.Array {
	const op = "ops.ConvGeneral"
	requireNonNil(op, x, w)
	p := convArgs(op, x, w, x.Ndim()-2, stride, paddingLo, paddingHi, kernelDilation, inputDilation, groups, flip)
	return convNode(op, x, w, p)
}

// Conv1D is the 1-D convolution (cross-correlation, as in MLX and
// PyTorch) of x [N, L, C_in] with w [C_out, K, C_in/groups], with the
// same padding on both sides: the result is [N, L_out, C_out]. See
// ConvGeneral.
func Conv1D(x, w *array.Array, stride, padding, dilation, groups int) *array.Array {
	const op = "ops.Conv1D"
	requireNonNil(op, x, w)
	s, pd, d := []int{stride}, []int{padding}, []int{dilation}
	return convNode(op, x, w, convArgs(op, x, w, 1, s, pd, pd, d, nil, groups, false))
}

// Conv2D is the 2-D convolution of x [N, H, W, C_in] with w [C_out, kH,
// kW, C_in/groups], with the same padding on both sides of each axis: the
// result is [N, H_out, W_out, C_out]. groups equal to C_in with C_out =
// C_in is a depthwise convolution. See ConvGeneral.
func Conv2D(x, w *array.Array, stride, padding, dilation [2]int, groups int) *array.Array {
	const op = "ops.Conv2D"
	requireNonNil(op, x, w)
	return convNode(op, x, w, convArgs(op, x, w, 2, stride[:], padding[:], padding[:], dilation[:], nil, groups, false))
}

// Conv3D is the 3-D convolution of x [N, D, H, W, C_in] with w [C_out,
// kD, kH, kW, C_in/groups]. See Conv2D and ConvGeneral.
func Conv3D(x, w *array.Array, stride, padding, dilation [3]int, groups int) *array.Array {
	const op = "ops.Conv3D"
	requireNonNil(op, x, w)
	return convNode(op, x, w, convArgs(op, x, w, 3, stride[:], padding[:], padding[:], dilation[:], nil, groups, false))
}

// convTranspose is the transposed convolution as MLX builds it: the
// input dilated by the stride and convolved, stride 1, with the mirrored
// kernel, padded so that output position o = i·stride - padding +
// k·dilation receives x[i]·w[k]; outputPadding adds positions at the end.
func convTranspose(op string, x, w *array.Array, nd int, stride, padding, dilation, outputPadding []int, groups int) *array.Array {
	requireNonNil(op, x, w)
	for i := range stride {
		if stride[i] < 1 {
			array.Panicf(op, "input shape %v and weight shape %v: stride %v must be positive", x.Shape(), w.Shape(), stride)
		}
		if outputPadding[i] < 0 {
			array.Panicf(op, "input shape %v and weight shape %v: output padding %v must be at least 0", x.Shape(), w.Shape(), outputPadding)
		}
	}
	p := convArgs(op, x, w, nd, nil, padding, outputPadding, dilation, stride, groups, true)
	ws := w.Shape()
	if len(ws) != nd+2 {
		array.Panicf(op, "input shape %v and weight shape %v: want %d dimensions each (batch, %d spatial, channels)", x.Shape(), ws, nd+2, nd)
	}
	for i := range nd {
		if outputPadding[i] >= max(stride[i], dilation[i]) {
			array.Panicf(op, "input shape %v and weight shape %v: output padding %v must be smaller than the stride %v or the dilation %v", x.Shape(), ws, outputPadding, stride, dilation)
		}
		span := p.kdil[i] * (ws[i+1] - 1)
		p.lo[i], p.hi[i] = span-padding[i], span-padding[i]+outputPadding[i]
	}
	return convNode(op, x, w, p)
}

// ConvTranspose1D is the transposed 1-D convolution (the gradient of
// Conv1D with respect to its input, as in MLX and PyTorch) of x [N, L,
// C_in] with w [C_out, K, C_in/groups]: the result is [N, L_out, C_out]
// with L_out = (L-1)·stride - 2·padding + dilation·(K-1) + 1 +
// outputPadding.
func ConvTranspose1D(x, w *array.Array, stride, padding, dilation, outputPadding, groups int) *array.Array {
	return convTranspose("ops.ConvTranspose1D", x, w, 1, []int{stride}, []int{padding}, []int{dilation}, []int{outputPadding}, groups)
}

// ConvTranspose2D is the transposed 2-D convolution of x [N, H, W, C_in]
// with w [C_out, kH, kW, C_in/groups]. See ConvTranspose1D.
func ConvTranspose2D(x, w *array.Array, stride, padding, dilation, outputPadding [2]int, groups int) *array.Array {
	return convTranspose("ops.ConvTranspose2D", x, w, 2, stride[:], padding[:], dilation[:], outputPadding[:], groups)
}

// ConvTranspose3D is the transposed 3-D convolution of x [N, D, H, W,
// C_in] with w [C_out, kD, kH, kW, C_in/groups]. See ConvTranspose1D.
func ConvTranspose3D(x, w *array.Array, stride, padding, dilation, outputPadding [3]int, groups int) *array.Array {
	return convTranspose("ops.ConvTranspose3D", x, w, 3, stride[:], padding[:], dilation[:], outputPadding[:], groups)
}
