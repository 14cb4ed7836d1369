package metal

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/internal/plan"
)

// Pool is a pooling window over the spatial axes of a channels-last array
// (N, spatial..., C), as cpu.Pool: one entry per spatial axis (1 to 3) in
// each field, padding symmetric.
type Pool struct {
	Kernel, Stride, Pad []int
}

// MaxPool plans out = the maximum of each window of in, as cpu.MaxPool:
// padding never wins, a NaN in a window gives NaN. Float and integer
// dtypes but 64-bit floats; any strides.
func MaxPool(out, in View, p Pool) ([]Launch, error) {
	return poolPlan("metal.MaxPool", "pool_max_", out, in, in, in, out, p, true)
}

// AvgPool plans out = the mean of each window of in, as cpu.AvgPool:
// each window's sum divided by the whole window size (padding counts as
// zeros). float32, float16 and bfloat16, summing in float32.
func AvgPool(out, in View, p Pool) ([]Launch, error) {
	return poolPlan("metal.AvgPool", "pool_avg_", out, in, in, in, out, p, false)
}

// AvgPoolGrad plans dx (the pooled input's shape) = the gradient of
// AvgPool from its output gradient dy, as cpu.AvgPoolGrad: each window's
// dy over the window size, added over the windows that hold an element.
// Each element of dx gathers its windows' terms, so no two threads write
// one element.
func AvgPoolGrad(dx, dy View, p Pool) ([]Launch, error) {
	return poolPlan("metal.AvgPoolGrad", "pool_avg_grad_", dx, dy, dy, dx, dy, p, false)
}

// MaxPoolGather plans out (MaxPool's output shape) = t (x's shape) at
// the position of each window's maximum in x, the first on ties and the
// first NaN if any, as cpu.MaxPoolGather.
func MaxPoolGather(out, x, t View, p Pool) ([]Launch, error) {
	if err := sameShape("metal.MaxPoolGather", x, t); err != nil {
		return nil, err
	}
	return poolPlan("metal.MaxPoolGather", "pool_max_gather_", out, x, t, x, out, p, false)
}

// MaxPoolScatter plans dx (x's shape) = the gradient of MaxPool from its
// output gradient dy, as cpu.MaxPoolScatter: each window's dy goes to its
// maximum in x (MaxPoolGather's choice), added where windows overlap.
// Each element of dx finds the maxima of the windows that hold it and adds
// their dy in window order, which needs no atomics and no index buffer.
func MaxPoolScatter(dx, x, dy View, p Pool) ([]Launch, error) {
	if err := sameShape("metal.MaxPoolScatter", x, dx); err != nil {
		return nil, err
	}
	return poolPlan("metal.MaxPoolScatter", "pool_max_scatter_", dx, x, dy, x, dy, p, false)
}

func sameShape(op string, a, b View) error {
	if len(a.Shape) != len(b.Shape) {
		return array.Errorf(op, "shapes %v and %v differ", a.Shape, b.Shape)
	}
	for i := range a.Shape {
		if a.Shape[i] != b.Shape[i] {
			return array.Errorf(op, "shapes %v and %v differ", a.Shape, b.Shape)
		}
	}
	return nil
}

// poolPlan plans pooling kernel base+dtype writing out from inputs a and
// b (a again for the one-input kernels). x and y are the operands of the
// pooled input's and the pooled result's shapes; the kernel runs a thread
// per element of out. ints allows integer dtypes (MaxPool).
func poolPlan(op, base string, out, a, b, x, y View, p Pool, ints bool) ([]Launch, error) {
	if err := checkViews(op, []string{"output", "input", "input"}, out, a, b); err != nil {
		return nil, err
	}
	dt := out.DType
	if a.DType != dt || b.DType != dt {
		return nil, array.Errorf(op, "dtypes %v and %v -> %v differ", a.DType, b.DType, dt)
	}
	if !dt.IsFloat() && (!ints || !dt.IsInteger()) {
		return nil, array.Errorf(op, "dtype %v is not supported", dt)
	}
	nd := len(p.Kernel)
	if nd < 1 || nd > maxConvDims || len(p.Stride) != nd || len(p.Pad) != nd || len(x.Shape) != nd+2 || len(y.Shape) != nd+2 ||
		len(out.Shape) != nd+2 {
		return nil, array.Errorf(op, "shapes %v -> %v do not fit a pool of %d spatial axes %+v", x.Shape, y.Shape, nd, p)
	}
	if y.Shape[0] != x.Shape[0] || y.Shape[nd+1] != x.Shape[nd+1] {
		return nil, array.Errorf(op, "shapes %v -> %v: batch and channels differ", x.Shape, y.Shape)
	}
	lead := maxConvDims - nd
	var in, po, k, s, pad [maxConvDims]int
	for i := range maxConvDims {
		in[i], po[i], k[i], s[i] = 1, 1, 1, 1
	}
	strides := func(v View) [5]int {
		st := [5]int{v.Strides[0], 0, 0, 0, v.Strides[nd+1]}
		copy(st[1+lead:], v.Strides[1:nd+1])
		return st
	}
	for i := range nd {
		a := lead + i
		in[a], po[a], k[a], s[a], pad[a] = x.Shape[1+i], y.Shape[1+i], p.Kernel[i], p.Stride[i], p.Pad[i]
		if k[a] < 1 || s[a] < 1 || pad[a] < 0 || 2*pad[a] > k[a] || in[a]+2*pad[a] < k[a] || po[a] != (in[a]+2*pad[a]-k[a])/s[a]+1 {
			return nil, array.Errorf(op, "shapes %v -> %v do not fit the pool %+v", x.Shape, y.Shape, p)
		}
	}
	if out.Size() == 0 {
		return nil, nil
	}
	n, c := out.Shape[0], out.Shape[nd+1]
	rows := out.Size() / c
	if rows > int(maxGridDim.Load()) {
		return nil, array.Errorf(op, "%d positions exceed the GPU's grid limit", rows)
	}
	aArg, aOff := bindAt(a, false)
	bArg, bOff := bindAt(b, false)
	oArg, oOff := bindAt(out, true)
	pr := params{}.add(n, c, rows)
	for _, v := range [][maxConvDims]int{in, po, k, s, pad} {
		pr = pr.add(v[:]...)
	}
	as, bs, os := strides(a), strides(b), strides(out)
	pr = pr.add(aOff, bOff, oOff).add(as[:]...).add(bs[:]...).add(os[:]...)
	gx := min(c, groupSize)
	return []Launch{{
		Library: "pool.metal", Kernel: base + dt.String(), Buffers: []bufArg{aArg, bArg, oArg}, Params: pr.bytes(),
		Grid: [3]int{c, rows, 1}, Group: [3]int{gx, min(rows, groupSize/gx), 1}, Fit: plan.FitThreads,
	}}, nil
}
