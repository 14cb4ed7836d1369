package ops_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// convCall runs the case's op on x and w with the case's parameters.
func convCall(t *testing.T, c refCase, x, w *array.Array) *array.Array {
	t.Helper()
	nd := len(c.Inputs[0].Shape) - 2
	ints := func(name string, def int) []int {
		v := make([]int, nd)
		for i := range v {
			v[i] = def
		}
		c.Param(t, name, &v)
		return v
	}
	groups := 1
	c.Param(t, "groups", &groups)
	stride, dil := ints("stride", 1), ints("dilation", 1)
	pad, outPad := ints("padding", 0), ints("output_padding", 0)
	switch c.Op {
	case "ConvGeneral":
		flip := false
		c.Param(t, "flip", &flip)
		return ops.ConvGeneral(x, w, stride, ints("lo", 0), ints("hi", 0), ints("kdil", 1), ints("idil", 1), groups, flip)
	case "Conv1D":
		return ops.Conv1D(x, w, stride[0], pad[0], dil[0], groups)
	case "Conv2D":
		return ops.Conv2D(x, w, [2]int(stride), [2]int(pad), [2]int(dil), groups)
	case "Conv3D":
		return ops.Conv3D(x, w, [3]int(stride), [3]int(pad), [3]int(dil), groups)
	case "ConvTranspose1D":
		return ops.ConvTranspose1D(x, w, stride[0], pad[0], dil[0], outPad[0], groups)
	case "ConvTranspose2D":
		return ops.ConvTranspose2D(x, w, [2]int(stride), [2]int(pad), [2]int(dil), [2]int(outPad), groups)
	case "ConvTranspose3D":
		return ops.ConvTranspose3D(x, w, [3]int(stride), [3]int(pad), [3]int(dil), [3]int(outPad), groups)
	}
	t.Fatalf("unknown op %q", c.Op)
	return nil
}

// TestConvReference checks every convolution against numpy's reference
// loop (testdata/gen_conv.py), with the input and the weight in each of
// the reference layouts.
func TestConvReference(t *testing.T) {
	for _, c := range loadCases(t, "conv.json") {
		t.Run(c.Op+"/"+c.Name, func(t *testing.T) {
			x, w := c.Inputs[0].Build(t), c.Inputs[1].Build(t)
			for _, l := range refLayouts {
				got := convCall(t, c, l.of(x), l.of(w))
				if err := got.Eval(); err != nil {
					t.Fatalf("%s: %v", l.name, err)
				}
				if got.DType() != array.Float32 {
					checkArray(t, l.name, got, c.Expected[0])
					continue
				}
				// A float32 sum of k products is off by up to about k
				// roundings of its terms' size, which here is near 1.
				k := w.Size() / max(1, w.Shape()[0])
				tol := arraytest.DefaultTol(array.Float32)
				tol.Atol = max(tol.Atol, 1e-7*float64(k))
				arraytest.AssertClose(t, c.Expected[0].Build(t), got, tol, l.name)
			}
		})
	}
}

// TestConvTiles runs a convolution whose output rows span many im2col
// tiles and groups, and one whose patches are cut into depth blocks, so
// that tiles split over cores, partial last tiles, per-group columns of
// the output and summed depth blocks are all exercised. The values are
// multiples of 1/8, so every sum is exact in float32 whatever its order,
// and the result must equal a float64 loop over output positions.
func TestConvTiles(t *testing.T) {
	// The tile counts below share out over cores only up to a few of
	// them: pin two, so that more cores cannot skip those paths.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, c := range []struct{ n, h, wd, cin, cout, groups int }{
		{4, 40, 79, 12, 10, 2}, // six tiles, shared out over cores
		{2, 9, 8, 130, 40, 1},  // one tile of three depth blocks, its product spread over cores
		{1, 4, 4, 600, 32, 1},  // eight rows, eleven depth blocks shared out over cores
	} {
		n, h, wd, cin, cout, groups := c.n, c.h, c.wd, c.cin, c.cout, c.groups
		xv, wv := make([]float32, n*h*wd*cin), make([]float32, cout*3*3*cin/groups)
		for i := range xv {
			xv[i] = float32((i*7919)%23-11) / 8
		}
		for i := range wv {
			wv[i] = float32((i*104729)%19-9) / 8
		}
		x, w := array.FromSlice(xv, n, h, wd, cin), array.FromSlice(wv, cout, 3, 3, cin/groups)
		got, err := array.ToSlice[float32](ops.Conv2D(x, w, [2]int{1, 2}, [2]int{1, 1}, [2]int{1, 1}, groups))
		if err != nil {
			t.Fatal(err)
		}
		ho, wo := h, (wd+2-3)/2+1
		cig, cog := cin/groups, cout/groups
		for b := range n {
			for i := range ho {
				for j := range wo {
					for co := range cout {
						g := co / cog
						var want float64
						for ki := range 3 {
							for kj := range 3 {
								yi, xj := i-1+ki, j*2-1+kj
								if yi < 0 || yi >= h || xj < 0 || xj >= wd {
									continue
								}
								for ci := range cig {
									want += float64(xv[((b*h+yi)*wd+xj)*cin+g*cig+ci]) * float64(wv[((co*3+ki)*3+kj)*cig+ci])
								}
							}
						}
						if g := got[((b*ho+i)*wo+j)*cout+co]; float64(g) != want {
							t.Fatalf("%+v: out[%d, %d, %d, %d] = %v, want %v", c, b, i, j, co, g, want)
						}
					}
				}
			}
		}
	}
}

// TestConvEmpty checks that empty batches, spatial axes and channel
// counts give empty (or zero) results of the right shape.
func TestConvEmpty(t *testing.T) {
	z := func(s ...int) *array.Array { return ops.Zeros(s, array.Float32) }
	for _, c := range []struct {
		x, w, want []int
	}{
		{[]int{0, 5, 5, 3}, []int{4, 3, 3, 3}, []int{0, 3, 3, 4}},
		{[]int{2, 0, 5, 3}, []int{4, 3, 3, 3}, []int{2, 0, 3, 4}},
		{[]int{2, 5, 5, 3}, []int{0, 3, 3, 3}, []int{2, 3, 3, 0}},
	} {
		got := ops.Conv2D(z(c.x...), z(c.w...), [2]int{1, 1}, [2]int{}, [2]int{1, 1}, 1)
		if err := got.Eval(); err != nil {
			t.Fatalf("%v * %v: %v", c.x, c.w, err)
		}
		if fmt.Sprint(got.Shape()) != fmt.Sprint(c.want) {
			t.Errorf("%v * %v: shape %v, want %v", c.x, c.w, got.Shape(), c.want)
		}
	}
	// No input channels: every output is an empty sum.
	got := ops.Conv1D(z(1, 4, 0), z(2, 3, 0), 1, 1, 1, 1)
	arraytest.AssertClose(t, ops.Zeros([]int{1, 4, 2}, array.Float32), got, arraytest.DefaultTol(array.Float32), "no channels")
}

func TestConvBadInput(t *testing.T) {
	z := func(s ...int) *array.Array { return ops.Zeros(s, array.Float32) }
	one, zero := [2]int{1, 1}, [2]int{}
	for _, c := range []struct {
		name, op, want string
		f              func()
	}{
		{"rank", "ops.Conv2D", "want 4 dimensions", func() { ops.Conv2D(z(5, 5, 3), z(4, 3, 3, 3), one, zero, one, 1) }},
		{"channels", "ops.Conv2D", "the weight has 2 input channels, want 3", func() { ops.Conv2D(z(1, 5, 5, 3), z(4, 3, 3, 2), one, zero, one, 1) }},
		{"groups do not divide", "ops.Conv2D", "groups 2 does not divide", func() { ops.Conv2D(z(1, 5, 5, 3), z(4, 3, 3, 1), one, zero, one, 2) }},
		{"groups zero", "ops.Conv2D", "groups 0 is not positive", func() { ops.Conv2D(z(1, 5, 5, 3), z(4, 3, 3, 3), one, zero, one, 0) }},
		{"stride zero", "ops.Conv2D", "stride [0 1] must be at least 1", func() { ops.Conv2D(z(1, 5, 5, 3), z(4, 3, 3, 3), [2]int{0, 1}, zero, one, 1) }},
		{"stride negative", "ops.Conv1D", "stride [-2] must be at least 1", func() { ops.Conv1D(z(1, 5, 3), z(4, 3, 3), -2, 0, 1, 1) }},
		{"dilation zero", "ops.Conv3D", "kernel dilation [1 0 1] must be at least 1", func() {
			ops.Conv3D(z(1, 5, 5, 5, 3), z(4, 3, 3, 3, 3), [3]int{1, 1, 1}, [3]int{}, [3]int{1, 0, 1}, 1)
		}},
		{"negative padding", "ops.Conv1D", "padding [-1] must be at least 0", func() { ops.Conv1D(z(1, 5, 3), z(4, 3, 3), 1, -1, 1, 1) }},
		{"kernel too large", "ops.Conv2D", "is larger than the padded input", func() { ops.Conv2D(z(1, 2, 5, 3), z(4, 3, 3, 3), one, zero, one, 1) }},
		{"empty kernel", "ops.Conv1D", "the kernel is empty", func() { ops.Conv1D(z(1, 5, 3), z(4, 0, 3), 1, 0, 1, 1) }},
		{"integers", "ops.Conv1D", "needs floating-point arrays", func() {
			ops.Conv1D(ops.Zeros([]int{1, 5, 3}, array.Int32), ops.Zeros([]int{4, 3, 3}, array.Int32), 1, 0, 1, 1)
		}},
		{"general lengths", "ops.ConvGeneral", "stride [1 1 1] has 3 values", func() {
			ops.ConvGeneral(z(1, 5, 5, 3), z(4, 3, 3, 3), []int{1, 1, 1}, nil, nil, nil, nil, 1, false)
		}},
		{"general rank", "ops.ConvGeneral", "4 spatial axes, want 1 to 3", func() {
			ops.ConvGeneral(z(1, 2, 2, 2, 2, 3), z(4, 1, 1, 1, 1, 3), nil, nil, nil, nil, nil, 1, false)
		}},
		{"input dilation zero", "ops.ConvGeneral", "input dilation [0] must be at least 1", func() {
			ops.ConvGeneral(z(1, 5, 3), z(4, 3, 3), nil, nil, nil, nil, []int{0}, 1, false)
		}},
		{"nil", "ops.Conv2D", "operand 1 is nil", func() { ops.Conv2D(z(1, 5, 5, 3), nil, one, zero, one, 1) }},
		{"transpose output padding", "ops.ConvTranspose1D", "output padding [2] must be smaller", func() {
			ops.ConvTranspose1D(z(1, 5, 3), z(4, 3, 3), 2, 0, 1, 2, 1)
		}},
		{"transpose negative output padding", "ops.ConvTranspose1D", "output padding [-1] must be at least 0", func() {
			ops.ConvTranspose1D(z(1, 5, 3), z(4, 3, 3), 2, 0, 1, -1, 1)
		}},
		{"transpose stride", "ops.ConvTranspose2D", "stride [1 0] must be positive", func() {
			ops.ConvTranspose2D(z(1, 5, 5, 3), z(4, 3, 3, 3), [2]int{1, 0}, zero, one, zero, 1)
		}},
	} {
		err := array.Try(c.f)
		var ae *array.Error
		if !errors.As(err, &ae) || ae.Op != c.op || !strings.Contains(ae.Msg, c.want) {
			t.Errorf("%s: %v, want a %s error containing %q", c.name, err, c.op, c.want)
		}
		if c.name != "nil" && c.name != "general rank" && ae != nil && !strings.Contains(ae.Msg, "shape [") {
			t.Errorf("%s: %v does not name the shapes", c.name, err)
		}
	}
}

// TestConvVmapEmptyBatch maps a convolution over a batch of no weights,
// which has no convolution to stack.
func TestConvVmapEmptyBatch(t *testing.T) {
	f := func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.Conv1D(in[0], in[1], 1, 1, 1, 1)}
	}
	x, w := ops.Zeros([]int{0, 2, 5, 3}, array.Float32), ops.Zeros([]int{0, 4, 3, 3}, array.Float32)
	got := graph.Vmap(f, nil, nil)(x, w)[0]
	if err := got.Eval(); err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 2, 5, 4}; fmt.Sprint(got.Shape()) != fmt.Sprint(want) {
		t.Errorf("shape %v, want %v", got.Shape(), want)
	}
}

// TestConvCompiledGradMatches checks that a compiled gradient of a
// convolution (traced once, replayed) gives what the uncompiled one
// gives, on a second call as on the first.
func TestConvCompiledGradMatches(t *testing.T) {
	loss := func(in ...*array.Array) *array.Array {
		y := ops.Conv2D(in[0], in[1], [2]int{2, 1}, [2]int{1, 1}, [2]int{1, 1}, 1)
		return ops.Sum(ops.Square(y))
	}
	g := graph.Grad(loss, 0, 1)
	cg := compile.Compile(g)
	defer cg.Release()
	xv, wv := make([]float64, 2*5*4*3), make([]float64, 4*3*3*3)
	for i := range xv {
		xv[i] = float64(i%7-3) / 4
	}
	for i := range wv {
		wv[i] = float64(i%5-2) / 4
	}
	x, w := array.FromSlice(xv, 2, 5, 4, 3), array.FromSlice(wv, 4, 3, 3, 3)
	want := g(x, w)
	for call := range 2 {
		got := cg.Call(x, w)
		for i := range want {
			arraytest.AssertClose(t, want[i], got[i], arraytest.DefaultTol(array.Float64), fmt.Sprintf("call %d, gradient %d", call, i))
		}
	}
}
