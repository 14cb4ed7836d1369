package ops_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// poolFunc returns the pooling function of case c (MaxPool or AvgPool, by
// its prefix) over c's window.
func poolFunc(t *testing.T, c refCase) func(x *array.Array) *array.Array {
	t.Helper()
	var nd int
	var k, s, p []int
	c.Param(t, "nd", &nd)
	c.Param(t, "kernel", &k)
	c.Param(t, "stride", &s)
	c.Param(t, "padding", &p)
	isMax := strings.HasPrefix(c.Op, "MaxPool")
	switch nd {
	case 1:
		if isMax {
			return func(x *array.Array) *array.Array { return ops.MaxPool1D(x, k[0], s[0], p[0]) }
		}
		return func(x *array.Array) *array.Array { return ops.AvgPool1D(x, k[0], s[0], p[0]) }
	case 2:
		k2, s2, p2 := [2]int(k), [2]int(s), [2]int(p)
		if isMax {
			return func(x *array.Array) *array.Array { return ops.MaxPool2D(x, k2, s2, p2) }
		}
		return func(x *array.Array) *array.Array { return ops.AvgPool2D(x, k2, s2, p2) }
	default:
		k3, s3, p3 := [3]int(k), [3]int(s), [3]int(p)
		if isMax {
			return func(x *array.Array) *array.Array { return ops.MaxPool3D(x, k3, s3, p3) }
		}
		return func(x *array.Array) *array.Array { return ops.AvgPool3D(x, k3, s3, p3) }
	}
}

// TestPoolReference checks the pools and their gradients against
// gen_pool.py's numpy loops, on every layout of refLayouts. The max
// gradient cases have ties, which go to the first maximum of a window.
func TestPoolReference(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range loadCases(t, "pool.json") {
		seen[c.Op] = true
		f := poolFunc(t, c)
		for _, l := range refLayouts {
			x := l.of(c.Inputs[0].Build(t))
			var got *array.Array
			switch c.Op {
			case "MaxPool", "AvgPool":
				got = f(x)
			case "MaxPoolVJP", "AvgPoolVJP":
				g := l.of(c.Inputs[1].Build(t))
				_, vjps := graph.VJP(func(in ...*array.Array) []*array.Array { return []*array.Array{f(in[0])} },
					[]*array.Array{x}, []*array.Array{g})
				got = vjps[0]
			default:
				t.Fatalf("%s: unknown op %q", c.Name, c.Op)
			}
			checkArray(t, c.Name+" "+l.name, got, c.Expected[0])
		}
	}
	for _, op := range []string{"MaxPool", "AvgPool", "MaxPoolVJP", "AvgPoolVJP"} {
		if !seen[op] {
			t.Errorf("pool.json has no %s case", op)
		}
	}
}

func TestPoolBadInput(t *testing.T) {
	x2 := ops.Zeros([]int{2, 5, 5, 3}, array.Float32)
	cases := []struct {
		name, op, want string
		f              func()
	}{
		{"rank", "ops.MaxPool2D", "input [5 5 3]", func() { ops.MaxPool2D(ops.Zeros([]int{5, 5, 3}, array.Float32), [2]int{2, 2}, [2]int{2, 2}, [2]int{}) }},
		{"rank 1-D", "ops.AvgPool1D", "want 3 dimensions", func() { ops.AvgPool1D(x2, 2, 2, 0) }},
		{"kernel larger than the padded input", "ops.MaxPool2D", "larger than the padded input 7", func() {
			ops.MaxPool2D(x2, [2]int{2, 8}, [2]int{1, 1}, [2]int{0, 1})
		}},
		{"padding more than half the kernel", "ops.AvgPool2D", "at most half the kernel", func() {
			ops.AvgPool2D(x2, [2]int{3, 3}, [2]int{1, 1}, [2]int{1, 2})
		}},
		{"zero stride", "ops.MaxPool3D", "stride must be positive", func() {
			ops.MaxPool3D(ops.Zeros([]int{1, 4, 4, 4, 1}, array.Float32), [3]int{2, 2, 2}, [3]int{1, 0, 1}, [3]int{})
		}},
		{"zero kernel", "ops.MaxPool1D", "kernel must be positive", func() { ops.MaxPool1D(ops.Zeros([]int{1, 4, 1}, array.Float32), 0, 1, 0) }},
		{"negative padding", "ops.AvgPool1D", "must not be negative", func() { ops.AvgPool1D(ops.Zeros([]int{1, 4, 1}, array.Float32), 2, 1, -1) }},
		{"integer average", "ops.AvgPool2D", "want a float dtype", func() {
			ops.AvgPool2D(ops.Zeros([]int{1, 4, 4, 1}, array.Int32), [2]int{2, 2}, [2]int{2, 2}, [2]int{})
		}},
		{"bool max", "ops.MaxPool1D", "want a float or integer dtype", func() { ops.MaxPool1D(ops.Zeros([]int{1, 4, 1}, array.Bool), 2, 1, 0) }},
		{"complex max", "ops.MaxPool1D", "complex64", func() { ops.MaxPool1D(ops.Zeros([]int{1, 4, 1}, array.Complex64), 2, 1, 0) }},
		{"nil", "ops.MaxPool2D", "nil", func() { ops.MaxPool2D(nil, [2]int{2, 2}, [2]int{2, 2}, [2]int{}) }},
	}
	for _, c := range cases {
		err := array.Try(c.f)
		var ae *array.Error
		if !errors.As(err, &ae) || ae.Op != c.op || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an *array.Error from %s containing %q", c.name, err, c.op, c.want)
		}
	}
}

// TestPoolEmpty checks that an empty batch, channel or spatial axis pools
// to an empty result of the right shape rather than failing; an empty
// spatial axis stays empty whatever the padding, as in Conv (padding
// alone once made a window of nothing but padding, and the kernel read
// out of range).
func TestPoolEmpty(t *testing.T) {
	for _, c := range []struct{ shape, want []int }{
		{[]int{0, 4, 4, 2}, []int{0, 3, 2, 2}},
		{[]int{2, 4, 4, 0}, []int{2, 3, 2, 0}},
		{[]int{2, 0, 4, 3}, []int{2, 0, 2, 3}},
	} {
		shape := c.shape
		for _, y := range []*array.Array{
			ops.MaxPool2D(ops.Zeros(shape, array.Float32), [2]int{2, 2}, [2]int{2, 2}, [2]int{1, 0}),
			ops.AvgPool2D(ops.Zeros(shape, array.Float32), [2]int{2, 2}, [2]int{2, 2}, [2]int{1, 0}),
		} {
			if err := y.Eval(); err != nil {
				t.Fatalf("%v: %v", shape, err)
			}
			want := c.want
			if got := y.Shape(); !slices.Equal(got, want) {
				t.Errorf("%v: shape %v, want %v", shape, got, want)
			}
		}
	}
}

// TestMaxPoolOverlappingScatter checks the backward of overlapping
// windows on a batch large enough to run in parallel: each element's
// gradient is the number of windows whose maximum it is.
func TestMaxPoolOverlappingScatter(t *testing.T) {
	const n, w = 64, 9
	v := make([]float32, n*w)
	for i := range v {
		v[i] = float32(i % w) // increasing along W: each window's last element wins
	}
	x := array.FromSlice(v, n, w, 1)
	_, vjps := graph.VJP(func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.MaxPool1D(in[0], 3, 1, 1)}
	}, []*array.Array{x}, []*array.Array{ops.Ones([]int{n, w, 1}, array.Float32)})
	got, err := array.ToSlice[float32](vjps[0])
	if err != nil {
		t.Fatal(err)
	}
	// windows [i-1, i+1] clipped: element j wins window j-1 (for j >= 1),
	// and the last element also wins its own (clipped) window.
	for b := range n {
		for j := range w {
			want := float32(0)
			if j >= 1 {
				want = 1
			}
			if j == w-1 {
				want = 2
			}
			if g := got[b*w+j]; g != want {
				t.Fatalf("image %d element %d: %v, want %v", b, j, g, want)
			}
		}
	}
}
