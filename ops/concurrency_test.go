package ops_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/ops"
)

// TestConcurrentEvalOfSharedPendingNodes guards the reproduction:
// one goroutine reads a pending chain while another reads a reduction of
// it. The output's buffer used to be published before its kernel wrote
// it, so the second reader took a half-written chain (175, 191, 2 instead
// of 200) and kept it for good.
func TestConcurrentEvalOfSharedPendingNodes(t *testing.T) {
	for round := range 200 {
		chain := ops.Zeros([]int{8}, array.Float32)
		for range 200 {
			chain = ops.AddScalar(chain, 1)
		}
		var got, sum []float32
		var errA, errB error
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); got, errA = array.ToSlice[float32](chain) }()
		go func() { defer wg.Done(); sum, errB = array.ToSlice[float32](ops.Sum(chain)) }()
		wg.Wait()
		if errA != nil || errB != nil {
			t.Fatalf("round %d: %v, %v", round, errA, errB)
		}
		if !slices.Equal(got, []float32{200, 200, 200, 200, 200, 200, 200, 200}) || sum[0] != 1600 {
			t.Fatalf("round %d: chain %v, sum %v; want 200s and 1600", round, got, sum)
		}
	}
}

// overlapCase is a graph that many goroutines read at once, and the value
// each of its outputs must have.
type overlapCase struct {
	names []string
	outs  []*array.Array
	want  [][]float32
}

func (c *overlapCase) add(name string, a *array.Array, want []float32) {
	c.names = append(c.names, name)
	c.outs = append(c.outs, a)
	c.want = append(c.want, want)
}

// twoOut is compiled: a node with two outputs (siblings) that goroutines
// read separately.
var twoOut = compile.Compile(func(in ...*array.Array) []*array.Array {
	return []*array.Array{ops.MulScalar(in[0], 2), ops.SubScalar(in[0], 1)}
})

// newOverlapCase builds, over one pending prefix p = x + depth, outputs
// that share it: the prefix itself, reductions, views of the pending
// prefix (reshape, transpose, slice), a shared intermediate read by two
// branches, the siblings of a compiled node, and an uncompiled chain on
// top of a compiled output. Every value is an integer, so float32
// arithmetic gives it exactly.
func newOverlapCase(depth int) *overlapCase {
	const n = 64
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(i)
	}
	p := array.FromSlice(xs)
	for range depth {
		p = ops.AddScalar(p, 1)
	}
	base := make([]float32, n) // p's value
	for i := range base {
		base[i] = float32(i + depth)
	}
	mapf := func(f func(float32) float32) []float32 {
		out := make([]float32, n)
		for i, v := range base {
			out[i] = f(v)
		}
		return out
	}
	var c overlapCase
	c.add("prefix", p, base)
	var total float32
	for _, v := range base {
		total += v
	}
	c.add("sum", ops.Sum(p), []float32{total})

	m := ops.Reshape(p, 8, 8)
	colSums := make([]float32, 8)
	for i, v := range base {
		colSums[i%8] += v
	}
	c.add("reshape-transpose-sum", ops.Sum(ops.Transpose(m), 1), colSums)
	c.add("slice", ops.Slice(p, ops.R(10, 20)), base[10:20])
	c.add("strided-slice-times-3", ops.MulScalar(ops.Slice(p, ops.R(0, n, 3)), 3), func() []float32 {
		var out []float32
		for i := 0; i < n; i += 3 {
			out = append(out, 3*base[i])
		}
		return out
	}())

	q := ops.Add(p, p) // shared by the next two
	c.add("shared-times-2", ops.MulScalar(q, 2), mapf(func(v float32) float32 { return 4 * v }))
	c.add("shared-minus-1", ops.SubScalar(q, 1), mapf(func(v float32) float32 { return 2*v - 1 }))
	c.add("maximum", ops.MaximumScalar(p, float64(depth+30)), mapf(func(v float32) float32 { return max(v, float32(depth+30)) }))

	outs := twoOut.Call(p)
	c.add("compiled-0", outs[0], mapf(func(v float32) float32 { return 2 * v }))
	c.add("compiled-1", outs[1], mapf(func(v float32) float32 { return v - 1 }))
	c.add("after-compiled", ops.Sum(ops.AddScalar(outs[1], 1)), []float32{total})
	return &c
}

// TestConcurrentEvalOfOverlappingGraphs has many goroutines read
// overlapping graphs in different orders, one output at a time or several
// in one Eval, and checks every value.
func TestConcurrentEvalOfOverlappingGraphs(t *testing.T) {
	concurrencySuite(t, 40)
}

func concurrencySuite(t *testing.T, rounds int) {
	t.Helper()
	const goroutines = 12
	for round := range rounds {
		c := newOverlapCase(20 + round%7)
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, goroutines*len(c.outs))
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(round), uint64(g)))
				order := r.Perm(len(c.outs))
				<-start
				if g%3 == 0 { // several outputs in one Eval
					sel := make([]*array.Array, 0, 3)
					for _, i := range order[:3] {
						sel = append(sel, c.outs[i])
					}
					if err := array.Eval(sel...); err != nil {
						errs <- err
						return
					}
				}
				for _, i := range order {
					got, err := array.ToSlice[float32](c.outs[i])
					if err != nil {
						errs <- fmt.Errorf("%s: %v", c.names[i], err)
						continue
					}
					if !slices.Equal(got, c.want[i]) {
						errs <- fmt.Errorf("%s = %v, want %v", c.names[i], got, c.want[i])
					}
				}
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
		if t.Failed() {
			return
		}
	}
}
