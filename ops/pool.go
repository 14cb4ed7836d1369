package ops

import (
	"fmt"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
)

// MaxPool1D returns the maximum of each window of x (N, W, C), channels
// last as in MLX: kernel elements along W, every stride-th window, with
// padding elements of -inf on each side. The result is
// (N, (W+2·padding-kernel)/stride+1, C) in x's dtype, a float or integer
// dtype. Padding may be at most half the kernel (PyTorch's rule), so every
// window holds an element of x. A window holding a NaN gives NaN. The
// gradient goes to each window's maximum, the first one on ties, as
// PyTorch's.
func MaxPool1D(x *array.Array, kernel, stride, padding int) *array.Array {
	return pool("ops.MaxPool1D", poolMax, x, []int{kernel}, []int{stride}, []int{padding})
}

// MaxPool2D is MaxPool1D over the two spatial axes of x (N, H, W, C),
// with kernel, stride and padding given for H and W.
func MaxPool2D(x *array.Array, kernel, stride, padding [2]int) *array.Array {
	return pool("ops.MaxPool2D", poolMax, x, kernel[:], stride[:], padding[:])
}

// MaxPool3D is MaxPool1D over the three spatial axes of x (N, D, H, W, C).
func MaxPool3D(x *array.Array, kernel, stride, padding [3]int) *array.Array {
	return pool("ops.MaxPool3D", poolMax, x, kernel[:], stride[:], padding[:])
}

// AvgPool1D returns the mean of each window of x (N, W, C), with
// MaxPool1D's windows and result shape, padding with zeros that count
// in the mean: each window's sum is divided by kernel, as PyTorch's
// default (count_include_pad=True) and MLX's avg_pool do. x has a float
// dtype; float16 and bfloat16 sum in float32.
func AvgPool1D(x *array.Array, kernel, stride, padding int) *array.Array {
	return pool("ops.AvgPool1D", poolAvg, x, []int{kernel}, []int{stride}, []int{padding})
}

// AvgPool2D is AvgPool1D over the two spatial axes of x (N, H, W, C); the
// divisor is the window's size, kernel[0]·kernel[1].
func AvgPool2D(x *array.Array, kernel, stride, padding [2]int) *array.Array {
	return pool("ops.AvgPool2D", poolAvg, x, kernel[:], stride[:], padding[:])
}

// AvgPool3D is AvgPool1D over the three spatial axes of x (N, D, H, W, C).
func AvgPool3D(x *array.Array, kernel, stride, padding [3]int) *array.Array {
	return pool("ops.AvgPool3D", poolAvg, x, kernel[:], stride[:], padding[:])
}

// pool checks a pooling call and records it.
func pool(op string, kind poolKind, x *array.Array, kernel, stride, padding []int) *array.Array {
	requireNonNil(op, x)
	dt := x.DType()
	if !dt.IsFloat() && (kind != poolMax || !dt.IsInteger()) {
		want := "a float"
		if kind == poolMax {
			want = "a float or integer"
		}
		array.Panicf(op, "input of shape %v has dtype %v, want %s dtype", x.Shape(), dt, want)
	}
	p := &poolPrim{Kind: kind, Nd: len(kernel)}
	copy(p.Kernel[:], kernel)
	copy(p.Stride[:], stride)
	copy(p.Pad[:], padding)
	shape, err := p.pooledShape(x.Shape())
	if err != nil {
		panic(err)
	}
	checkedBytes(op, shape, dt)
	return node(shape, dt, p, x)
}

// poolKind is what a pooling primitive computes. Besides the two pools,
// the derivatives are primitives of their own, each the transpose of
// another: AvgGrad of Avg, and MaxScatter (the VJP of Max) of MaxGather
// (its JVP). So every derivative of every order is a pooling primitive.
type poolKind uint8

const (
	poolMax        poolKind = iota // max of each window of in[0]
	poolAvg                        // mean of each window of in[0]
	poolAvgGrad                    // in[0] (pooled) spread over the windows, the input's shape
	poolMaxGather                  // in[1] at the maximum of each window of in[0]
	poolMaxScatter                 // in[1] (pooled) added at the maxima of in[0]'s windows
)

// poolPrim is a pooling primitive over Nd spatial axes of channels-last
// arrays. Only the first Nd entries of the arrays are used; In is the
// pooled input's spatial shape, which poolAvgGrad produces.
type poolPrim struct {
	Kind                    poolKind
	Nd                      int
	Kernel, Stride, Pad, In [3]int
}

func (p *poolPrim) Name() string {
	base := "MaxPool"
	if p.Kind == poolAvg || p.Kind == poolAvgGrad {
		base = "AvgPool"
	}
	suffix := [...]string{"", "", "Grad", "Gather", "Scatter"}[p.Kind]
	return fmt.Sprintf("%s%dD%s", base, p.Nd, suffix)
}

func (p *poolPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}

func (p *poolPrim) cpuPool() cpu.Pool {
	return cpu.Pool{Kernel: p.Kernel[:p.Nd], Stride: p.Stride[:p.Nd], Pad: p.Pad[:p.Nd]}
}

func (p *poolPrim) evalCPU(in, out []*array.Array) error {
	o, cp := alloc(out[0]), p.cpuPool()
	switch p.Kind {
	case poolMax:
		return cpu.MaxPool(o, bufOf(in[0]), cp)
	case poolAvg:
		return cpu.AvgPool(o, bufOf(in[0]), cp)
	case poolAvgGrad:
		return cpu.AvgPoolGrad(o, bufOf(in[0]), cp)
	case poolMaxGather:
		return cpu.MaxPoolGather(o, bufOf(in[0]), bufOf(in[1]), cp)
	default:
		return cpu.MaxPoolScatter(o, bufOf(in[0]), bufOf(in[1]), cp)
	}
}

func (p *poolPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return poolGPU(s, p, in, out)
}

func (p *poolPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes checks the inputs' shapes again, since a shapeless trace
// may replay the primitive on new ones.
func (p *poolPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	xs := in[0].Shape()
	switch p.Kind {
	case poolAvgGrad:
		if len(xs) != p.Nd+2 {
			return nil, array.Errorf("ops."+p.Name(), "gradient of shape %v: want %d dimensions", xs, p.Nd+2)
		}
		shape := append([]int{xs[0]}, p.In[:p.Nd]...)
		return [][]int{append(shape, xs[p.Nd+1])}, nil
	case poolMaxGather, poolMaxScatter:
		want := in[0].Shape()
		if p.Kind == poolMaxScatter {
			var err error
			if want, err = p.pooledShape(xs); err != nil {
				return nil, err
			}
		}
		if !equalInts(in[1].Shape(), want) {
			return nil, array.Errorf("ops."+p.Name(), "input %v with %v: want %v", xs, in[1].Shape(), want)
		}
		if p.Kind == poolMaxScatter {
			return [][]int{xs}, nil
		}
	}
	shape, err := p.pooledShape(xs)
	if err != nil {
		return nil, err
	}
	return [][]int{shape}, nil
}

// pooledShape is the shape of the pool of an input of shape x, or the
// error that names why x cannot be pooled with p's window.
func (p *poolPrim) pooledShape(x []int) ([]int, error) {
	op := "ops." + p.Name()
	k, s, pad := p.Kernel[:p.Nd], p.Stride[:p.Nd], p.Pad[:p.Nd]
	fail := func(why string, args ...any) ([]int, error) {
		return nil, array.Errorf(op, "input %v, kernel %v, stride %v, padding %v: %s", x, k, s, pad, fmt.Sprintf(why, args...))
	}
	if len(x) != p.Nd+2 {
		return fail("want %d dimensions (N, %d spatial, C)", p.Nd+2, p.Nd)
	}
	out := []int{x[0]}
	for i := range p.Nd {
		switch {
		case k[i] < 1:
			return fail("kernel must be positive")
		case s[i] < 1:
			return fail("stride must be positive")
		case pad[i] < 0:
			return fail("padding must not be negative")
		case 2*pad[i] > k[i]:
			return fail("padding must be at most half the kernel")
		case x[1+i] == 0:
			// An empty axis pools to an empty one, as in Conv: padding
			// alone would make windows with nothing of the input in them.
			out = append(out, 0)
			continue
		case x[1+i]+2*pad[i] < k[i]:
			return fail("kernel %d is larger than the padded input %d along spatial axis %d", k[i], x[1+i]+2*pad[i], i)
		}
		out = append(out, (x[1+i]+2*pad[i]-k[i])/s[i]+1)
	}
	return append(out, x[p.Nd+1]), nil
}

// with records a pooling primitive of p's window and the given kind over
// ins; the output takes ins[0]'s dtype.
func (p *poolPrim) with(kind poolKind, ins ...*array.Array) *array.Array {
	q := *p
	q.Kind, q.In = kind, [3]int{}
	return q.apply(ins...)
}

// avgGrad records the gradient of p's average pool of x, from g.
func (p *poolPrim) avgGrad(x, g *array.Array) *array.Array {
	q := *p
	q.Kind = poolAvgGrad
	copy(q.In[:], x.Shape()[1:1+p.Nd])
	return q.apply(g)
}

// apply records p over ins, which may have new shapes (Vmap).
func (p *poolPrim) apply(ins ...*array.Array) *array.Array {
	dt := ins[0].DType()
	for i := 1; i < len(ins); i++ {
		ins[i] = AsType(ins[i], dt)
	}
	shapes, err := p.OutputShapes(ins)
	if err != nil {
		panic(err)
	}
	q := *p
	return node(shapes[0], dt, &q, ins...)
}

// VJP: each kind's derivative is its transpose (see poolKind). The max
// kinds are piecewise constant in the input whose windows they search.
func (p *poolPrim) VJP(in, _, cots []*array.Array, argnums []int) []*array.Array {
	g := cots[0]
	out := make([]*array.Array, len(argnums))
	for i, a := range argnums {
		switch {
		case p.Kind == poolMax:
			out[i] = p.with(poolMaxScatter, in[0], g)
		case p.Kind == poolAvg:
			out[i] = p.avgGrad(in[0], g)
		case p.Kind == poolAvgGrad:
			out[i] = p.with(poolAvg, g)
		case a == 0:
			out[i] = ZerosLike(in[0])
		case p.Kind == poolMaxGather:
			out[i] = p.with(poolMaxScatter, in[0], g)
		default:
			out[i] = p.with(poolMaxGather, in[0], g)
		}
	}
	return out
}

// JVP: every kind is linear in its last input, and the max kinds are
// piecewise constant in their first.
func (p *poolPrim) JVP(in, out, tans []*array.Array, argnums []int) []*array.Array {
	var t *array.Array
	for i, a := range argnums {
		switch {
		case p.Kind == poolMax:
			t = p.with(poolMaxGather, in[0], tans[i])
		case p.Kind == poolAvg || p.Kind == poolAvgGrad:
			t = p.apply(tans[i])
		case a == 1:
			t = p.with(p.Kind, in[0], tans[i])
		}
	}
	if t == nil {
		t = ZerosLike(out[0])
	}
	return []*array.Array{t}
}

// Vmap folds the batch into N: the pools treat images independently.
// An unbatched operand of the two-input kinds is broadcast to the batch.
func (p *poolPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	b := 0
	for i, x := range in {
		if axes[i] >= 0 {
			b = x.Shape()[axes[i]]
		}
	}
	n := 0
	folded := make([]*array.Array, len(in))
	for i, x := range in {
		if axes[i] < 0 {
			x = BroadcastTo(x, append([]int{b}, x.Shape()...)...)
		} else {
			x = batchFront(x, axes[i])
		}
		s := x.Shape()
		n = s[1]
		folded[i] = Reshape(x, append([]int{s[0] * s[1]}, s[2:]...)...)
	}
	y := p.apply(folded...)
	return []*array.Array{Reshape(y, append([]int{b, n}, y.Shape()[1:]...)...)}, []int{0}
}
