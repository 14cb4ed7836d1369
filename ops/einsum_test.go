package ops_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// TestEinsumReference checks Einsum against numpy.einsum (gen_einsum.py)
// on every layout of the operands, and that EinsumPath's plan costs no
// more FLOPs than the path numpy.einsum_path(optimize="greedy") picks.
func TestEinsumReference(t *testing.T) {
	cases := loadCases(t, "einsum.json")
	if len(cases) < 40 {
		t.Fatalf("%d cases, want at least 40", len(cases))
	}
	for _, c := range cases {
		var subs string
		var numpyFLOPs float64
		c.Param(t, "subscripts", &subs)
		c.Param(t, "numpy_greedy_flops", &numpyFLOPs)
		in := make([]*array.Array, len(c.Inputs))
		anyIn := make([]any, len(c.Inputs))
		for i, r := range c.Inputs {
			in[i] = r.Build(t)
			anyIn[i] = in[i]
		}
		plan, err := ops.EinsumPath(subs, anyIn...)
		if err != nil {
			t.Fatalf("%s: EinsumPath(%q): %v", c.Name, subs, err)
		}
		if plan.FLOPs > numpyFLOPs {
			t.Errorf("%s: plan costs %g FLOPs, numpy's greedy path %g:\n%v", c.Name, plan.FLOPs, numpyFLOPs, plan)
		}
		for _, l := range refLayouts {
			xs := make([]*array.Array, len(in))
			for i, x := range in {
				xs[i] = l.of(x)
			}
			checkArray(t, c.Name+" "+l.name, ops.Einsum(subs, xs...), c.Expected[0])
		}
	}
}

// TestEinsumBatchedMatMulIsOneMatMul guards the speed goal: a batched
// matrix product through Einsum is the MatMul node itself, with no copy,
// transpose or reshape around it.
func TestEinsumBatchedMatMulIsOneMatMul(t *testing.T) {
	a := ops.Zeros([]int{2, 3, 4}, array.Float32)
	b := ops.Zeros([]int{2, 4, 5}, array.Float32)
	for _, s := range []string{"bij,bjk->bik", "ij,jk->ik"} {
		x, y := a, b
		if len(s) < 10 {
			x, y = ops.Zeros([]int{3, 4}, array.Float32), ops.Zeros([]int{4, 5}, array.Float32)
		}
		r := ops.Einsum(s, x, y)
		if _, ok := r.Primitive().(*ops.MatMulPrim); !ok || r.Inputs()[0] != x || r.Inputs()[1] != y {
			t.Errorf("Einsum(%q) is %s of %d inputs, not MatMul of the operands", s, r.Primitive().Name(), len(r.Inputs()))
		}
	}
	// A product with b transposed reads b's transposed view in place.
	r := ops.Einsum("ij,kj->ik", ops.Zeros([]int{3, 4}, array.Float32), ops.Zeros([]int{5, 4}, array.Float32))
	if _, ok := r.Primitive().(*ops.MatMulPrim); !ok {
		t.Errorf("Einsum(\"ij,kj->ik\") ends in %s, not MatMul", r.Primitive().Name())
	}
}

// TestEinsumPathPlan checks a plan's steps, counts and report. For
// ij,jk,kl->il over [2 3], [3 4], [4 5], numpy 1.24's greedy path is
// (1, 2), (0, 1) with a naive count of 360 and an optimized one of 181
// (180 plus one); the cheapest order, which EinsumPath takes for three
// operands, contracts ij with jk first: 48 + 80 = 128.
func TestEinsumPathPlan(t *testing.T) {
	p, err := ops.EinsumPath("ij,jk,kl->il", []int{2, 3}, []int{3, 4}, []int{4, 5})
	if err != nil {
		t.Fatal(err)
	}
	var ord [][]int
	var subs []string
	for _, s := range p.Steps {
		ord = append(ord, s.Operands)
		subs = append(subs, s.Subscripts)
	}
	if !slices.EqualFunc(ord, [][]int{{0, 1}, {0, 1}}, slices.Equal) || p.FLOPs != 128 || p.NaiveFLOPs != 360 ||
		p.LargestIntermediate != 20 || !slices.Equal(subs, []string{"ij,jk->ik", "kl,ik->il"}) {
		t.Errorf("plan: steps %v %v, FLOPs %g, naive %g, largest %d", ord, subs, p.FLOPs, p.NaiveFLOPs, p.LargestIntermediate)
	}
	s := p.String()
	for _, want := range []string{"Complete contraction:  ij,jk,kl->il", "Naive FLOP count:  3.600e+02",
		"Optimized FLOP count:  1.280e+02", "Theoretical speedup:  2.812", "ij,jk->ik", "kl,ik->il"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	// The ellipsis is spelled out in letters the subscripts do not use.
	p, err = ops.EinsumPath("...ij,jk", ops.Zeros([]int{2, 3, 4}, array.Float32), []int{4, 5})
	if err != nil {
		t.Fatal(err)
	}
	if p.Subscripts != "Aij,jk->Aik" {
		t.Errorf("subscripts %q, want \"Aij,jk->Aik\"", p.Subscripts)
	}
}

// TestEinsumBadInput checks that bad subscripts and shapes are an
// *array.Error naming Einsum (or EinsumPath) and the shapes.
func TestEinsumBadInput(t *testing.T) {
	m := func(s ...int) *array.Array { return ops.Zeros(s, array.Float32) }
	for _, c := range []struct {
		subs string
		in   []*array.Array
		want string
	}{
		{"ij,jk->ik", []*array.Array{m(2, 3), m(4, 5)}, "label 'j' has size 4"},
		{"ij,jk->ik", []*array.Array{m(2, 3)}, "2 terms for 1 operands"},
		{"ij->ik", []*array.Array{m(2, 3)}, "output label 'k' is in no operand"},
		{"ij->ii", []*array.Array{m(2, 3)}, "output label 'i' appears more than once"},
		{"ijk", []*array.Array{m(2, 3)}, "3 labels for the 2 dimensions"},
		{"i", []*array.Array{m(2, 3)}, "1 labels for the 2 dimensions"},
		{"ii", []*array.Array{m(2, 3)}, "label 'i' repeats in term 0 with sizes 2 and 3"},
		{"i1,j", []*array.Array{m(2, 3), m(2)}, "'1' is not a letter"},
		{"i..j", []*array.Array{m(2, 3)}, "only in one ellipsis"},
		{"...i...", []*array.Array{m(2, 3)}, "only in one ellipsis"},
		{"i->j->k", []*array.Array{m(2)}, "'->' must appear at most once"},
		{"i-j", []*array.Array{m(2, 3)}, "'->' must appear at most once"},
		{"...ij->ij", []*array.Array{m(4, 2, 3)}, "no '...'"},
		{"...ij,...ij", []*array.Array{m(2, 2, 3), m(3, 2, 3)}, "size 3 in operand 1 and 2"},
		{"ij", nil, "no operands"},
	} {
		err := array.Try(func() { ops.Einsum(c.subs, c.in...) })
		var ae *array.Error
		if !errors.As(err, &ae) || ae.Op != "ops.Einsum" || !strings.Contains(ae.Msg, c.want) {
			t.Errorf("Einsum(%q): %v, want an ops.Einsum error containing %q", c.subs, err, c.want)
			continue
		}
		if len(c.in) > 0 && !strings.Contains(ae.Msg, fmt.Sprint(c.in[0].Shape())) {
			t.Errorf("Einsum(%q): %v does not name the shapes", c.subs, err)
		}
	}
	if err := array.Try(func() { ops.Einsum("i", nil) }); err == nil {
		t.Error("Einsum of a nil operand: no error")
	}
	for _, in := range [][]any{{"shape"}, {[]int{-1}}, {(*array.Array)(nil)}} {
		_, err := ops.EinsumPath("i", in...)
		var ae *array.Error
		if !errors.As(err, &ae) || ae.Op != "ops.EinsumPath" {
			t.Errorf("EinsumPath(%v): %v, want an ops.EinsumPath error", in, err)
		}
	}
	if _, err := ops.EinsumPath("ij,jk", []int{2, 3}, []int{2, 3}); err == nil || !strings.Contains(err.Error(), "ops.EinsumPath") {
		t.Errorf("EinsumPath with mismatched shapes: %v", err)
	}
}

func ExampleEinsum() {
	a := array.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	b := array.FromSlice([]float32{1, 0, 0, 1, 1, 1}, 3, 2)
	fmt.Println(ops.Einsum("ij,jk->ik", a, b))                                  // matrix product
	fmt.Println(ops.Einsum("ii", array.FromSlice([]float32{1, 2, 3, 4}, 2, 2))) // trace
	fmt.Println(ops.Einsum("...i,...i", a, a))                                  // row-wise dot products
	// Output:
	// array([[ 4.,  5.],
	//        [10., 11.]], dtype=float32)
	// array(5., dtype=float32)
	// array([14., 77.], dtype=float32)
}

func ExampleEinsumPath() {
	p, err := ops.EinsumPath("ij,jk,kl->il", []int{100, 2}, []int{2, 100}, []int{100, 3})
	if err != nil {
		panic(err)
	}
	for _, s := range p.Steps {
		fmt.Println(s.Operands, s.Subscripts, s.FLOPs)
	}
	// Output:
	// [1 2] jk,kl->jl 1200
	// [0 1] ij,jl->il 1200
}
