package graph_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// This file is the derivative conformance suite: one table, gradCases,
// with a row for every operation of package ops. Each row is checked
//   - reverse mode (VJP) against central finite differences in float64,
//   - forward mode (JVP) against finite differences,
//   - both again with the inputs as transposed, strided and broadcast
//     views,
//   - Vmap against an explicit loop.
// TestEveryOpHasAGradRow fails when an exported function of ops has no
// row, so a new operation cannot slip in unchecked.
//
// Rows are added by the grad_*_test.go files through register.

// arg describes one argument of a row's function.
type arg struct {
	shape  []int        // nil or empty: a 0-d argument
	lo, hi float64      // range of uniform random values; both 0 means [-1, 1]
	fixed  *array.Array // a constant argument (indices, masks): neither differentiated nor batched
}

// gradCase is one row of the table.
type gradCase struct {
	op   string // the ops function the row checks, as named in package ops
	name string // what distinguishes the row from others of the same op
	f    func(xs ...*array.Array) *array.Array
	args []arg
	// zero: f is piecewise constant (comparisons, rounding, arg
	// reductions, integer results), so its derivatives are exactly zero.
	zero bool
	// ties: f has no derivative where values tie (sorting, max, top-k),
	// so the broadcast layout, which repeats values, is skipped.
	ties bool
}

var gradCases []gradCase

// register adds rows to the table; the grad_*_test.go files call it from
// package-level variable initialisers.
func register(cs ...gradCase) bool {
	gradCases = append(gradCases, cs...)
	return true
}

// notOps lists exported functions of ops that are not operations on
// arrays, or that take no array to differentiate.
var notOps = map[string]string{
	"BroadcastShapes":    "shape arithmetic, no array",
	"R":                  "builds a Range",
	"Whole":              "builds a Range",
	"Zeros":              "creation from a shape: no array input",
	"Ones":               "creation from a shape: no array input",
	"Full":               "creation from a shape: no array input",
	"Arange":             "creation from numbers: no array input",
	"Linspace":           "creation from numbers: no array input",
	"Eye":                "creation from numbers: no array input",
	"Identity":           "creation from numbers: no array input",
	"LinspaceNoEndpoint": "creation from numbers: no array input",
	"NumberOfElements":   "a count of elements: no derivative",
	"Hanning":            "a window: creation from numbers, no array input",
	"Hamming":            "a window: creation from numbers, no array input",
	"Blackman":           "a window: creation from numbers, no array input",
	"Bartlett":           "a window: creation from numbers, no array input",
	"RandomBits":         "random draws: the only input is a uint32 key (random's TestGradients)",
	"RandomUniform":      "random draws: the only input is a uint32 key (random's TestGradients)",
	"RandomNormal":       "random draws: the only input is a uint32 key (random's TestGradients)",
	"Threefry2x32":       "uint32 key and counts: nothing to differentiate",
}

func TestEveryOpHasAGradRow(t *testing.T) {
	have := map[string]bool{}
	for _, c := range gradCases {
		have[c.op] = true
	}
	var missing []string
	for _, name := range exportedOps(t) {
		if _, ok := notOps[name]; !ok && !have[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("ops functions without a row in gradCases: %s", strings.Join(missing, " "))
	}
}

// exportedOps lists the exported functions of package ops, read from its
// source.
func exportedOps(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join("..", "ops", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.IsExported() {
				names = append(names, fn.Name.Name)
			}
		}
	}
	sort.Strings(names)
	return names
}

func seedOf(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

func randValues(r *rand.Rand, n int, lo, hi float64) []float64 {
	if lo == 0 && hi == 0 {
		lo, hi = -1, 1
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*r.Float64()
	}
	return v
}

func size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func values(t *testing.T, a *array.Array) []float64 {
	t.Helper()
	v, err := array.ToSlice[float64](ops.AsType(a, array.Float64))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// layout rebuilds a contiguous float64 array x as another layout with the
// same values.
type layout struct {
	name string
	make func(x []float64, shape []int) *array.Array
	ok   func(x []float64, shape []int) bool
}

var layouts = []layout{
	{"contiguous", func(x []float64, shape []int) *array.Array { return array.FromSlice(x, shape...) }, nil},
	{"transposed", func(x []float64, shape []int) *array.Array {
		// store x transposed, then view it transposed back
		nd := len(shape)
		stored := array.FromSlice(x, shape...)
		perm := make([]int, nd)
		for i := range perm {
			perm[i] = nd - 1 - i
		}
		tr := ops.Copy(ops.Transpose(stored, perm...))
		if err := tr.Eval(); err != nil {
			panic(err)
		}
		return ops.Transpose(tr, perm...)
	}, func(_ []float64, shape []int) bool { return len(shape) >= 2 && size(shape) > 1 }},
	{"strided", func(x []float64, shape []int) *array.Array {
		// every other element of a buffer twice as long on the last axis
		if len(shape) == 0 {
			return array.FromSlice(x)
		}
		wide := slices.Clone(shape)
		wide[len(wide)-1] *= 2
		buf := make([]float64, size(wide))
		for i := range buf {
			buf[i] = math.NaN()
		}
		last := shape[len(shape)-1]
		for i, v := range x {
			row, col := i/last, i%last
			buf[row*2*last+2*col] = v
		}
		ranges := make([]ops.Range, len(shape))
		for i := range ranges {
			ranges[i] = ops.Whole()
		}
		ranges[len(ranges)-1] = ops.R(ops.None, ops.None, 2)
		return ops.Slice(array.FromSlice(buf, wide...), ranges...)
	}, func(_ []float64, shape []int) bool { return len(shape) >= 1 && size(shape) > 0 }},
	{"broadcast", func(x []float64, shape []int) *array.Array {
		// x repeats along axis 0: view its first slab broadcast
		small := slices.Clone(shape)
		small[0] = 1
		return ops.BroadcastTo(array.FromSlice(x[:size(small)], small...), shape...)
	}, func(x []float64, shape []int) bool {
		if len(shape) < 2 || shape[0] < 2 {
			return false
		}
		n := size(shape) / shape[0]
		for i := n; i < len(x); i++ {
			if x[i] != x[i%n] {
				return false
			}
		}
		return true
	}},
}

// point is the inputs of one check: the differentiable arguments' values.
type point struct {
	vals   [][]float64
	shapes [][]int
}

func (c gradCase) diffArgs() []int {
	var idx []int
	for i, a := range c.args {
		if a.fixed == nil {
			idx = append(idx, i)
		}
	}
	return idx
}

// call runs f with the differentiable arguments taken from xs.
func (c gradCase) call(xs []*array.Array) *array.Array {
	in := make([]*array.Array, len(c.args))
	k := 0
	for i, a := range c.args {
		if a.fixed != nil {
			in[i] = a.fixed
		} else {
			in[i] = xs[k]
			k++
		}
	}
	return c.f(in...)
}

func (c gradCase) fn() graph.Fn {
	return func(xs ...*array.Array) []*array.Array { return []*array.Array{c.call(xs)} }
}

func (c gradCase) randomPoint(r *rand.Rand, broadcastable bool) point {
	var p point
	for _, i := range c.diffArgs() {
		a := c.args[i]
		v := randValues(r, size(a.shape), a.lo, a.hi)
		if broadcastable && len(a.shape) > 1 && a.shape[0] > 1 {
			n := size(a.shape) / a.shape[0]
			for j := n; j < len(v); j++ {
				v[j] = v[j%n]
			}
		}
		p.vals = append(p.vals, v)
		shape := a.shape
		if shape == nil {
			shape = []int{} // a nil shape is a 0-d argument, not FromSlice's 1-D default
		}
		p.shapes = append(p.shapes, shape)
	}
	return p
}

func (p point) arrays(l layout) []*array.Array {
	out := make([]*array.Array, len(p.vals))
	for i := range p.vals {
		if l.ok != nil && !l.ok(p.vals[i], p.shapes[i]) {
			out[i] = array.FromSlice(p.vals[i], p.shapes[i]...)
			continue
		}
		out[i] = l.make(p.vals[i], p.shapes[i])
	}
	return out
}

func (p point) contiguous() []*array.Array { return p.arrays(layouts[0]) }

// eval returns f at p as float64 values.
func (c gradCase) eval(t *testing.T, p point) []float64 {
	return values(t, c.call(p.contiguous()))
}

const fdStep = 1e-6

// compare fails unless got agrees with want, computed by finite
// differences, within their error.
func compare(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if !arraytest.AssertClose(t, array.FromSlice(want), array.FromSlice(got), arraytest.Tol{Rtol: 1e-4, Atol: 1e-5}, what) {
		t.FailNow()
	}
}

func TestGradTable(t *testing.T) {
	for _, c := range gradCases {
		t.Run(c.op+"/"+c.name, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seedOf(c.op+c.name), 7))
			p := c.randomPoint(r, false)
			out := c.call(p.contiguous())
			if c.zero {
				checkZero(t, c, p, out)
				return
			}
			if out.DType() != array.Float64 {
				t.Fatalf("output dtype %v: rows that are not zero must compute in float64", out.DType())
			}
			cot := randValues(r, out.Size(), 0, 0)
			tans := make([][]float64, len(p.vals))
			for i := range tans {
				tans[i] = randValues(r, len(p.vals[i]), 0, 0)
			}
			wantVJP := fdVJP(t, c, p, cot, out.Shape())
			wantJVP := fdJVP(t, c, p, tans)
			for _, l := range layouts {
				if l.name == "broadcast" && c.ties {
					continue
				}
				q := p
				if l.name == "broadcast" {
					q = c.randomPoint(r, true)
				}
				xs := q.arrays(l)
				wv, wj := wantVJP, wantJVP
				if l.name == "broadcast" {
					wv = fdVJP(t, c, q, cot, out.Shape())
					wj = fdJVP(t, c, q, tans)
				}
				_, vjps := graph.VJP(c.fn(), xs, []*array.Array{array.FromSlice(cot, out.Shape()...)})
				for i, g := range vjps {
					if !slices.Equal(g.Shape(), q.shapes[i]) {
						t.Fatalf("%s: VJP of argument %d has shape %v, want %v", l.name, i, g.Shape(), q.shapes[i])
					}
					compare(t, fmt.Sprintf("%s VJP, argument %d", l.name, i), values(t, g), wv[i])
				}
				tanArrays := make([]*array.Array, len(tans))
				for i := range tans {
					tanArrays[i] = array.FromSlice(tans[i], q.shapes[i]...)
				}
				_, jvps := graph.JVP(c.fn(), xs, tanArrays)
				compare(t, l.name+" JVP", values(t, jvps[0]), wj)
			}
			checkVmap(t, c, r)
		})
	}
}

// fdVJP returns the finite-difference gradient of sum(cot * f) with
// respect to each differentiable argument.
func fdVJP(t *testing.T, c gradCase, p point, cot []float64, _ []int) [][]float64 {
	phi := func(q point) float64 {
		y := c.eval(t, q)
		s := 0.0
		for i := range y {
			s += cot[i] * y[i]
		}
		return s
	}
	out := make([][]float64, len(p.vals))
	for i := range p.vals {
		out[i] = make([]float64, len(p.vals[i]))
		for j := range p.vals[i] {
			orig := p.vals[i][j]
			p.vals[i][j] = orig + fdStep
			hi := phi(p)
			p.vals[i][j] = orig - fdStep
			lo := phi(p)
			p.vals[i][j] = orig
			out[i][j] = (hi - lo) / (2 * fdStep)
		}
	}
	return out
}

// fdJVP returns the finite-difference directional derivative of f along
// the tangents.
func fdJVP(t *testing.T, c gradCase, p point, tans [][]float64) []float64 {
	shifted := func(s float64) point {
		q := point{shapes: p.shapes}
		for i := range p.vals {
			v := slices.Clone(p.vals[i])
			for j := range v {
				v[j] += s * tans[i][j]
			}
			q.vals = append(q.vals, v)
		}
		return q
	}
	hi, lo := c.eval(t, shifted(fdStep)), c.eval(t, shifted(-fdStep))
	out := make([]float64, len(hi))
	for i := range out {
		out[i] = (hi[i] - lo[i]) / (2 * fdStep)
	}
	return out
}

// checkZero asserts that a piecewise-constant row has zero derivatives in
// both modes.
func checkZero(t *testing.T, c gradCase, p point, out *array.Array) {
	xs := p.contiguous()
	f := func(xs ...*array.Array) []*array.Array {
		return []*array.Array{ops.AsType(c.call(xs), array.Float64)}
	}
	_, vjps := graph.VJP(f, xs, []*array.Array{ops.OnesLike(ops.AsType(out, array.Float64))})
	for i, g := range vjps {
		for j, v := range values(t, g) {
			if v != 0 {
				t.Fatalf("VJP of argument %d: element %d is %v, want 0", i, j, v)
			}
		}
	}
	tans := make([]*array.Array, len(xs))
	for i, x := range xs {
		tans[i] = ops.OnesLike(x)
	}
	_, jvps := graph.JVP(f, xs, tans)
	for j, v := range values(t, jvps[0]) {
		if v != 0 {
			t.Fatalf("JVP: element %d is %v, want 0", j, v)
		}
	}
	r := rand.New(rand.NewPCG(seedOf(c.op+c.name), 9))
	checkVmap(t, c, r)
}

// checkVmap compares Vmap of the row's function with an explicit loop over
// a batch of 3, once with every differentiable argument batched on axis 0
// and once with only the first batched, on its last axis.
func checkVmap(t *testing.T, c gradCase, r *rand.Rand) {
	const batch = 3
	diff := c.diffArgs()
	pts := make([]point, batch)
	for b := range pts {
		pts[b] = c.randomPoint(r, false)
	}
	var loop []*array.Array
	for b := range pts {
		loop = append(loop, c.call(pts[b].contiguous()))
	}
	want := values(t, ops.Stack(loop, 0))
	stacked := make([]*array.Array, len(diff))
	for i := range diff {
		per := make([]*array.Array, batch)
		for b := range pts {
			per[b] = array.FromSlice(pts[b].vals[i], pts[b].shapes[i]...)
		}
		stacked[i] = ops.Stack(per, 0)
	}
	got := graph.Vmap(c.fn(), nil, nil)(stacked...)[0]
	compare(t, "Vmap (all batched on axis 0)", values(t, got), want)

	if len(diff) == 0 {
		return
	}
	// first argument batched on its last axis; the rest fixed at point 0
	loop = loop[:0]
	per := make([]*array.Array, batch)
	for b := range pts {
		q := point{vals: slices.Clone(pts[0].vals), shapes: pts[0].shapes}
		q.vals[0] = pts[b].vals[0]
		loop = append(loop, c.call(q.contiguous()))
		per[b] = array.FromSlice(pts[b].vals[0], pts[b].shapes[0]...)
	}
	want = values(t, ops.Stack(loop, 0))
	in := pts[0].contiguous()
	in[0] = ops.Stack(per, -1)
	axes := make([]int, len(in))
	for i := range axes {
		axes[i] = graph.NoAxis
	}
	axes[0] = -1
	got = graph.Vmap(c.fn(), axes, nil)(in...)[0]
	compare(t, "Vmap (first argument batched on its last axis)", values(t, got), want)
}

// TestLayoutTable is the cross-layout harness: every row's operation runs
// on transposed, strided and broadcast views and must give what it gives
// on contiguous inputs with the same values.
func TestLayoutTable(t *testing.T) {
	for _, c := range gradCases {
		t.Run(c.op+"/"+c.name, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seedOf(c.op+c.name), 11))
			for _, l := range layouts[1:] {
				if l.name == "broadcast" && c.ties {
					continue
				}
				p := c.randomPoint(r, l.name == "broadcast")
				want := values(t, c.call(p.contiguous()))
				got := values(t, c.call(p.arrays(l)))
				if len(got) != len(want) {
					t.Fatalf("%s: %d values, want %d", l.name, len(got), len(want))
				}
				for i := range got {
					if !(got[i] == want[i] || math.Abs(got[i]-want[i]) <= 1e-12*(1+math.Abs(want[i])) || (math.IsNaN(got[i]) && math.IsNaN(want[i]))) {
						t.Fatalf("%s: element %d is %v, contiguous input gives %v", l.name, i, got[i], want[i])
					}
				}
			}
		})
	}
}
