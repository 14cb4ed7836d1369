package ops_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/ops"
)

// fastCall runs the fast-family op of case c on its inputs (already laid
// out) and returns its results: the op's output, or the VJP's cotangents.
func fastCall(t *testing.T, c refCase, in []*array.Array) []*array.Array {
	t.Helper()
	var eps, base, scale float64
	var weight, bias, trad, causal, hasMask bool
	var dims, offset int
	c.Param(t, "eps", &eps)
	c.Param(t, "weight", &weight)
	c.Param(t, "bias", &bias)
	c.Param(t, "dims", &dims)
	c.Param(t, "traditional", &trad)
	c.Param(t, "base", &base)
	c.Param(t, "scale", &scale)
	c.Param(t, "offset", &offset)
	c.Param(t, "causal", &causal)
	c.Param(t, "mask", &hasMask)
	// norm splits a norm's inputs into x, weight and bias (nil if none)
	norm := func(in []*array.Array) (x, w, b *array.Array) {
		x, i := in[0], 1
		if weight {
			w, i = in[i], i+1
		}
		if bias {
			b = in[i]
		}
		return x, w, b
	}
	attn := func(in []*array.Array) *array.Array {
		var m *array.Array
		if hasMask {
			m = in[3]
		}
		return ops.ScaledDotProductAttention(in[0], in[1], in[2], scale, m, causal)
	}
	vjp := func(f func(in []*array.Array) *array.Array, primals []*array.Array, g *array.Array) []*array.Array {
		_, vjps := graph.VJP(func(in ...*array.Array) []*array.Array { return []*array.Array{f(in)} }, primals, []*array.Array{g})
		return vjps
	}
	switch c.Op {
	case "LayerNorm":
		x, w, b := norm(in)
		return []*array.Array{ops.LayerNorm(x, w, b, eps)}
	case "RMSNorm":
		x, w, _ := norm(in)
		return []*array.Array{ops.RMSNorm(x, w, eps)}
	case "LayerNormVJP":
		return vjp(func(in []*array.Array) *array.Array { return ops.LayerNorm(in[0], in[1], in[2], eps) }, in[:3], in[3])
	case "RMSNormVJP":
		return vjp(func(in []*array.Array) *array.Array { return ops.RMSNorm(in[0], in[1], eps) }, in[:2], in[2])
	case "RoPE":
		return []*array.Array{ops.RoPE(in[0], dims, trad, base, scale, offset)}
	case "ScaledDotProductAttention":
		return []*array.Array{attn(in)}
	case "ScaledDotProductAttentionVJP":
		n := len(in) - 1
		// the cotangents of q, k and v; a boolean mask has none
		return vjp(attn, in[:n], in[n])[:3]
	}
	t.Fatalf("%s: unknown op %q", c.Name, c.Op)
	return nil
}

// TestFastReference checks the fast family against gen_fast.py's numpy
// formulas in every dtype, on every layout of refLayouts.
func TestFastReference(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range loadCases(t, "fast.json") {
		seen[c.Op] = true
		for _, l := range refLayouts {
			in := make([]*array.Array, len(c.Inputs))
			for i, r := range c.Inputs {
				in[i] = l.of(r.Build(t))
			}
			got := fastCall(t, c, in)
			if len(got) != len(c.Expected) {
				t.Fatalf("%s: %d results, want %d", c.Name, len(got), len(c.Expected))
			}
			for i, g := range got {
				name := c.Name + " " + l.name
				if strings.HasSuffix(c.Op, "VJP") && g.DType() == array.Float32 {
					// sums of products of cotangents cancel: compare on the
					// scale of the values rather than each one's
					arraytest.AssertClose(t, c.Expected[i].Build(t), g, arraytest.Tol{Rtol: 1e-4, Atol: 2e-5}, name)
					continue
				}
				checkArray(t, name, g, c.Expected[i])
			}
		}
	}
	for _, op := range []string{"LayerNorm", "RMSNorm", "LayerNormVJP", "RMSNormVJP", "RoPE", "ScaledDotProductAttention", "ScaledDotProductAttentionVJP"} {
		if !seen[op] {
			t.Errorf("fast.json has no %s case", op)
		}
	}
}

// The unfused compositions the fast primitives stand for, from ordinary
// ops in float64.

func layerNormUnfused(x, w, b *array.Array, eps float64) *array.Array {
	xc := ops.Sub(x, ops.KeepDims(ops.Mean, x, -1))
	y := ops.Mul(xc, ops.Rsqrt(ops.AddScalar(ops.KeepDims(ops.Mean, ops.Square(xc), -1), eps)))
	if w != nil {
		y = ops.Mul(y, w)
	}
	if b != nil {
		y = ops.Add(y, b)
	}
	return y
}

func rmsNormUnfused(x, w *array.Array, eps float64) *array.Array {
	y := ops.Mul(x, ops.Rsqrt(ops.AddScalar(ops.KeepDims(ops.Mean, ops.Square(x), -1), eps)))
	if w != nil {
		y = ops.Mul(y, w)
	}
	return y
}

func ropeUnfused(x *array.Array, dims int, traditional bool, base, scale float64, offset int) *array.Array {
	sh := x.Shape()
	l, n, half := sh[len(sh)-2], sh[len(sh)-1], dims/2
	pos := ops.MulScalar(ops.AddScalar(ops.Arange(0, float64(l), 1, x.DType()), float64(offset)), scale)
	inv := ops.Exp(ops.MulScalar(ops.Arange(0, float64(half), 1, x.DType()), -2*math.Log(base)/float64(dims)))
	ang := ops.Mul(ops.ExpandDims(pos, 1), ops.ExpandDims(inv, 0))
	c, s := ops.Cos(ang), ops.Sin(ang)
	rot := ops.SliceAxis(x, -1, ops.R(0, dims))
	var x1, x2 *array.Array
	if traditional {
		pairs := ops.Unflatten(rot, rot.Ndim()-1, half, 2)
		x1 = ops.Squeeze(ops.SliceAxis(pairs, -1, ops.R(0, 1)), -1)
		x2 = ops.Squeeze(ops.SliceAxis(pairs, -1, ops.R(1, 2)), -1)
	} else {
		x1, x2 = ops.SliceAxis(rot, -1, ops.R(0, half)), ops.SliceAxis(rot, -1, ops.R(half, dims))
	}
	y1 := ops.Sub(ops.Mul(x1, c), ops.Mul(x2, s))
	y2 := ops.Add(ops.Mul(x1, s), ops.Mul(x2, c))
	var y *array.Array
	if traditional {
		st := ops.Stack([]*array.Array{y1, y2}, -1)
		y = ops.Reshape(st, append(append([]int{}, st.Shape()[:st.Ndim()-2]...), dims)...)
	} else {
		y = ops.Concatenate([]*array.Array{y1, y2}, -1)
	}
	if dims < n {
		y = ops.Concatenate([]*array.Array{y, ops.SliceAxis(x, -1, ops.R(dims, n))}, -1)
	}
	return y
}

func sdpaUnfused(q, k, v *array.Array, scale float64, mask *array.Array, causal bool) *array.Array {
	g := q.Shape()[1] / k.Shape()[1]
	k, v = ops.Repeat(k, g, 1), ops.Repeat(v, g, 1)
	s := ops.MulScalar(ops.MatMul(q, ops.SwapAxes(k, -1, -2)), scale)
	neg := ops.Full(nil, math.Inf(-1), s.DType())
	if mask != nil {
		if mask.DType() == array.Bool {
			s = ops.Where(mask, s, neg)
		} else {
			s = ops.Add(s, mask)
		}
	}
	if causal {
		l, sl := q.Shape()[2], k.Shape()[2]
		s = ops.Where(ops.Tri(l, sl, sl-l, array.Bool), s, neg)
	}
	return ops.MatMul(ops.Softmax(s, -1), v)
}

// randF64 is an array of the given shape, uniform in [-1, 1), the same
// for the same seed.
func randF64(seed uint64, shape ...int) *array.Array {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return array.FromSlice(workload.RandF64(n, seed), shape...)
}

// fastPair is a fused op and its unfused composition over the same
// float64 inputs.
type fastPair struct {
	name           string
	fused, unfused func(in ...*array.Array) *array.Array
	in             []*array.Array
}

func fastPairs() []fastPair {
	x := randF64(1, 3, 4, 24)
	w, b := randF64(2, 24), randF64(3, 24)
	q, k, v := randF64(4, 2, 4, 6, 8), randF64(5, 2, 2, 9, 8), randF64(6, 2, 2, 9, 5)
	mask := randF64(7, 2, 1, 6, 9)
	bmask := ops.Greater(randF64(8, 6, 9), ops.Full(nil, -0.6, array.Float64))
	return []fastPair{
		{"LayerNorm", func(in ...*array.Array) *array.Array { return ops.LayerNorm(in[0], in[1], in[2], 1e-5) },
			func(in ...*array.Array) *array.Array { return layerNormUnfused(in[0], in[1], in[2], 1e-5) }, []*array.Array{x, w, b}},
		{"LayerNorm plain", func(in ...*array.Array) *array.Array { return ops.LayerNorm(in[0], nil, nil, 1e-3) },
			func(in ...*array.Array) *array.Array { return layerNormUnfused(in[0], nil, nil, 1e-3) }, []*array.Array{x}},
		// one array as both weight and bias: its derivatives are the sum of both roles
		{"LayerNorm shared weight and bias", func(in ...*array.Array) *array.Array { return ops.LayerNorm(in[0], in[1], in[1], 1e-5) },
			func(in ...*array.Array) *array.Array { return layerNormUnfused(in[0], in[1], in[1], 1e-5) }, []*array.Array{x, w}},
		{"RMSNorm", func(in ...*array.Array) *array.Array { return ops.RMSNorm(in[0], in[1], 1e-5) },
			func(in ...*array.Array) *array.Array { return rmsNormUnfused(in[0], in[1], 1e-5) }, []*array.Array{x, w}},
		{"RoPE", func(in ...*array.Array) *array.Array { return ops.RoPE(in[0], 16, false, 10000, 1, 5) },
			func(in ...*array.Array) *array.Array { return ropeUnfused(in[0], 16, false, 10000, 1, 5) }, []*array.Array{x}},
		{"RoPE traditional", func(in ...*array.Array) *array.Array { return ops.RoPE(in[0], 24, true, 100, 0.5, 0) },
			func(in ...*array.Array) *array.Array { return ropeUnfused(in[0], 24, true, 100, 0.5, 0) }, []*array.Array{x}},
		{"ScaledDotProductAttention grouped", func(in ...*array.Array) *array.Array {
			return ops.ScaledDotProductAttention(in[0], in[1], in[2], 0.3, nil, false)
		}, func(in ...*array.Array) *array.Array { return sdpaUnfused(in[0], in[1], in[2], 0.3, nil, false) }, []*array.Array{q, k, v}},
		{"ScaledDotProductAttention additive causal", func(in ...*array.Array) *array.Array {
			return ops.ScaledDotProductAttention(in[0], in[1], in[2], 0.3, in[3], true)
		}, func(in ...*array.Array) *array.Array { return sdpaUnfused(in[0], in[1], in[2], 0.3, in[3], true) }, []*array.Array{q, k, v, mask}},
		{"ScaledDotProductAttention boolean", func(in ...*array.Array) *array.Array {
			return ops.ScaledDotProductAttention(in[0], in[1], in[2], 0.3, bmask, false)
		}, func(in ...*array.Array) *array.Array { return sdpaUnfused(in[0], in[1], in[2], 0.3, bmask, false) }, []*array.Array{q, k, v}},
	}
}

// TestFastMatchesUnfused checks each fused op, its VJP and its JVP
// against the composition of ordinary ops it replaces, in float64 and
// float32.
func TestFastMatchesUnfused(t *testing.T) {
	for _, p := range fastPairs() {
		for _, dt := range []array.DType{array.Float64, array.Float32} {
			tol := arraytest.Tol{Rtol: 1e-10, Atol: 1e-12}
			if dt == array.Float32 {
				tol = arraytest.Tol{Rtol: 1e-4, Atol: 1e-5}
			}
			in := make([]*array.Array, len(p.in))
			for i, x := range p.in {
				in[i] = ops.AsType(x, dt)
			}
			fn := func(f func(in ...*array.Array) *array.Array) graph.Fn {
				return func(in ...*array.Array) []*array.Array { return []*array.Array{f(in...)} }
			}
			want, got := p.unfused(in...), p.fused(in...)
			arraytest.AssertClose(t, want, got, tol, p.name+" "+dt.String())
			g := ops.Cos(want)
			_, wv := graph.VJP(fn(p.unfused), in, []*array.Array{g})
			_, gv := graph.VJP(fn(p.fused), in, []*array.Array{g})
			for i := range wv {
				arraytest.AssertClose(t, wv[i], gv[i], tol, "%s %v VJP %d", p.name, dt, i)
			}
			tans := make([]*array.Array, len(in))
			for i, x := range in {
				tans[i] = ops.Sin(ops.MulScalar(x, 3))
			}
			_, wj := graph.JVP(fn(p.unfused), in, tans)
			_, gj := graph.JVP(fn(p.fused), in, tans)
			arraytest.AssertClose(t, wj[0], gj[0], tol, p.name+" "+dt.String()+" JVP")
		}
	}
}

// TestFastVmap checks each op under Vmap against a loop over the batch,
// with the batch on axis 1 of every batched input: all of them, only the
// first, all but the first, and only the second (a norm's weight without
// its bias).
func TestFastVmap(t *testing.T) {
	for _, p := range fastPairs() {
		n := 3
		batched := make([]*array.Array, len(p.in))
		axes := make([]int, len(p.in))
		for i, x := range p.in {
			var xs []*array.Array
			for j := range n {
				xs = append(xs, ops.AddScalar(ops.MulScalar(x, 1+0.1*float64(j)), 0.05*float64(j)))
			}
			axes[i] = min(1, x.Ndim())
			batched[i] = ops.Stack(xs, axes[i])
		}
		variants := []struct {
			name string
			on   func(i int) bool
		}{
			{"", func(int) bool { return true }},
			{" first batched", func(i int) bool { return i == 0 }},
			{" rest batched", func(i int) bool { return i > 0 }},
			{" second batched", func(i int) bool { return i == 1 }},
		}
		for _, v := range variants {
			if v.name != "" && len(p.in) == 1 {
				continue
			}
			in, ax := make([]*array.Array, len(p.in)), make([]int, len(p.in))
			for i := range p.in {
				in[i], ax[i] = p.in[i], graph.NoAxis
				if v.on(i) {
					in[i], ax[i] = batched[i], axes[i]
				}
			}
			got := graph.Vmap(func(in ...*array.Array) []*array.Array { return []*array.Array{p.fused(in...)} }, ax, nil)(in...)[0]
			var want []*array.Array
			for j := range n {
				xs := make([]*array.Array, len(in))
				for i, x := range in {
					xs[i] = x
					if ax[i] != graph.NoAxis {
						xs[i] = ops.Squeeze(ops.SliceAxis(x, ax[i], ops.R(j, j+1)), ax[i])
					}
				}
				want = append(want, p.unfused(xs...))
			}
			arraytest.AssertClose(t, ops.Stack(want, 0), got, arraytest.Tol{Rtol: 1e-10, Atol: 1e-12}, p.name+v.name)
		}
	}
}

// TestFastLargeRowsAndBlocks runs sizes past the kernels' blocks (128
// queries, 256 keys, several rows a core) against the compositions.
func TestFastLargeRowsAndBlocks(t *testing.T) {
	x := ops.AsType(randF64(11, 300, 130), array.Float32)
	arraytest.AssertClose(t, layerNormUnfused(x, nil, nil, 1e-5), ops.LayerNorm(x, nil, nil, 1e-5), arraytest.Tol{Rtol: 1e-4, Atol: 1e-5}, "LayerNorm")
	q, k, v := randF64(12, 1, 2, 200, 16), randF64(13, 1, 2, 600, 16), randF64(14, 1, 2, 600, 16)
	want := sdpaUnfused(q, k, v, 2, nil, true)
	arraytest.AssertClose(t, want, ops.ScaledDotProductAttention(q, k, v, 2, nil, true), arraytest.Tol{Rtol: 1e-10, Atol: 1e-12}, "attention")
	f := func(fn func(q, k, v *array.Array, s float64, m *array.Array, c bool) *array.Array) graph.Fn {
		return func(in ...*array.Array) []*array.Array { return []*array.Array{fn(in[0], in[1], in[2], 2, nil, true)} }
	}
	g := ops.Cos(want)
	_, wv := graph.VJP(f(sdpaUnfused), []*array.Array{q, k, v}, []*array.Array{g})
	_, gv := graph.VJP(f(ops.ScaledDotProductAttention), []*array.Array{q, k, v}, []*array.Array{g})
	for i := range wv {
		arraytest.AssertClose(t, wv[i], gv[i], arraytest.Tol{Rtol: 1e-9, Atol: 1e-11}, "attention VJP %d", i)
	}
}

// TestFastFullyMaskedRowIsNaN pins the edge the kernels share with
// Softmax: a query that keeps no key gives NaN.
func TestFastFullyMaskedRowIsNaN(t *testing.T) {
	q, k, v := randF64(1, 1, 1, 2, 4), randF64(2, 1, 1, 3, 4), randF64(3, 1, 1, 3, 4)
	mask := array.FromSlice([]bool{false, false, false, true, false, true}, 2, 3)
	got, err := array.ToSlice[float64](ops.ScaledDotProductAttention(q, k, v, 1, mask, false))
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range got {
		if nan := i < 4; nan != math.IsNaN(g) {
			t.Errorf("element %d = %v: want NaN only in the masked row", i, g)
		}
	}
}

func TestFastBadInput(t *testing.T) {
	f32 := func(s ...int) *array.Array { return ops.Zeros(s, array.Float32) }
	q := f32(2, 4, 5, 8)
	cases := []struct {
		name string
		f    func()
		want string
	}{
		{"LayerNorm int", func() { ops.LayerNorm(ops.Zeros([]int{2, 3}, array.Int32), nil, nil, 1e-5) }, "int32"},
		{"LayerNorm 0-d", func() { ops.LayerNorm(f32(), nil, nil, 1e-5) }, "at least one"},
		{"LayerNorm weight length", func() { ops.LayerNorm(f32(2, 3), f32(4), nil, 1e-5) }, "[2 3]"},
		{"LayerNorm bias 2-D", func() { ops.LayerNorm(f32(2, 3), nil, f32(1, 3), 1e-5) }, "[1 3]"},
		{"LayerNorm negative eps", func() { ops.LayerNorm(f32(2, 3), nil, nil, -1) }, "eps"},
		{"RMSNorm NaN eps", func() { ops.RMSNorm(f32(2, 3), nil, math.NaN()) }, "eps"},
		{"RMSNorm int weight", func() { ops.RMSNorm(f32(2, 3), ops.Zeros([]int{3}, array.Int32), 1e-5) }, "int32"},
		{"RoPE 1-D", func() { ops.RoPE(f32(8), 8, false, 10000, 1, 0) }, "[8]"},
		{"RoPE odd dims", func() { ops.RoPE(f32(2, 8), 3, false, 10000, 1, 0) }, "dims 3"},
		{"RoPE dims too big", func() { ops.RoPE(f32(2, 8), 10, false, 10000, 1, 0) }, "dims 10"},
		{"RoPE base", func() { ops.RoPE(f32(2, 8), 8, false, 0, 1, 0) }, "base"},
		{"RoPE offset", func() { ops.RoPE(f32(2, 8), 8, false, 10000, 1, -1) }, "offset"},
		{"RoPE complex", func() { ops.RoPE(ops.Zeros([]int{2, 8}, array.Complex64), 8, false, 10000, 1, 0) }, "complex64"},
		{"SDPA 3-D", func() { ops.ScaledDotProductAttention(f32(4, 5, 8), f32(2, 4, 5, 8), f32(2, 4, 5, 8), 1, nil, false) }, "[4 5 8]"},
		{"SDPA heads", func() { ops.ScaledDotProductAttention(q, f32(2, 3, 5, 8), f32(2, 3, 5, 8), 1, nil, false) }, "not a multiple"},
		{"SDPA head size", func() { ops.ScaledDotProductAttention(q, f32(2, 4, 5, 6), f32(2, 4, 5, 8), 1, nil, false) }, "head sizes"},
		{"SDPA k v lengths", func() { ops.ScaledDotProductAttention(q, f32(2, 4, 5, 8), f32(2, 4, 6, 8), 1, nil, false) }, "lengths"},
		{"SDPA batch", func() { ops.ScaledDotProductAttention(q, f32(1, 4, 5, 8), f32(1, 4, 5, 8), 1, nil, false) }, "batch"},
		{"SDPA dtypes", func() {
			ops.ScaledDotProductAttention(q, ops.Zeros([]int{2, 4, 5, 8}, array.Float64), f32(2, 4, 5, 8), 1, nil, false)
		}, "float64"},
		{"SDPA int", func() {
			i := ops.Zeros([]int{2, 4, 5, 8}, array.Int32)
			ops.ScaledDotProductAttention(i, i, i, 1, nil, false)
		}, "int32"},
		{"SDPA mask shape", func() { ops.ScaledDotProductAttention(q, f32(2, 4, 6, 8), f32(2, 4, 6, 8), 1, f32(5, 5), false) }, "[5 5]"},
		{"SDPA mask dtype", func() {
			ops.ScaledDotProductAttention(q, f32(2, 4, 5, 8), f32(2, 4, 5, 8), 1, ops.Zeros([]int{5, 5}, array.Int32), false)
		}, "int32"},
		{"SDPA scale", func() { ops.ScaledDotProductAttention(q, q, q, math.Inf(1), nil, false) }, "scale"},
	}
	for _, c := range cases {
		err := array.Try(c.f)
		var ae *array.Error
		if !errors.As(err, &ae) {
			t.Errorf("%s: got %v, want *array.Error", c.name, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "ops.") {
			t.Errorf("%s: %q does not name the op and %q", c.name, err, c.want)
		}
	}
}

// TestFastVmapOfGradient batches attention's backward primitive:
// per-example gradients under Vmap match a loop over the examples.
func TestFastVmapOfGradient(t *testing.T) {
	q, k, v := randF64(21, 3, 1, 2, 4, 4), randF64(22, 3, 1, 1, 5, 4), randF64(23, 3, 1, 1, 5, 4)
	mask := randF64(24, 4, 5)
	loss := func(in ...*array.Array) *array.Array {
		return ops.Sum(ops.Square(ops.ScaledDotProductAttention(in[0], in[1], in[2], 0.5, mask, true)))
	}
	grad := graph.Grad(loss, 0, 1, 2)
	got := graph.Vmap(grad, nil, nil)(q, k, v)
	for j := range 3 {
		at := func(x *array.Array) *array.Array { return ops.Squeeze(ops.SliceAxis(x, 0, ops.R(j, j+1)), 0) }
		want := grad(at(q), at(k), at(v))
		for i := range want {
			arraytest.AssertClose(t, want[i], at(got[i]), arraytest.Tol{Rtol: 1e-10, Atol: 1e-12}, "example %d, gradient %d", j, i)
		}
	}
}
