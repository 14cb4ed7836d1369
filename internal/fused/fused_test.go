package fused

import (
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

func gelu() *Program {
	f32 := array.Float32
	return New([]array.DType{f32, f32, array.Bool}, []Instr{
		{Kind: Binary, Op: uint8(opset.Mul), Args: []int{0, 1}, DType: f32},
		{Kind: Unary, Op: uint8(opset.Tanh), Args: []int{3}, DType: f32},
		{Kind: Where, Args: []int{2, 4, 0}, DType: f32},
		{Kind: AsType, Args: []int{5}, DType: array.Float16},
	}, []int{6, 4})
}

// TestTextForm pins the text form: it names programs in messages and
// keys the Metal backend's generated sources, so it must not drift.
func TestTextForm(t *testing.T) {
	p := gelu()
	want := "r0 = in0 float32\nr1 = in1 float32\nr2 = in2 bool\n" +
		"r3 = Mul(r0, r1) float32\nr4 = Tanh(r3) float32\nr5 = Where(r2, r4, r0) float32\nr6 = AsType(r5) float16\n" +
		"out r6 r4"
	if got := p.String(); got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
	if q := gelu(); q.Hash() != p.Hash() {
		t.Errorf("equal programs hash to %x and %x", p.Hash(), q.Hash())
	}
	if p.DType(2) != array.Bool || p.DType(6) != array.Float16 {
		t.Errorf("register dtypes %v, %v", p.DType(2), p.DType(6))
	}
}

func TestCacheBuildsOnce(t *testing.T) {
	p := gelu()
	type key struct{}
	builds := 0
	for range 3 {
		if v := p.Cache(key{}, func() any { builds++; return builds }); v != 1 {
			t.Fatalf("Cache returned %v, want the first build's 1", v)
		}
	}
	if builds != 1 {
		t.Errorf("%d builds, want 1", builds)
	}
}

// TestStagesAndPasses pins the passes of a layer norm's row program: the
// mean's fold in pass 0, the variance's in pass 1, the scaled output in
// pass 2; counts and per-row work take their folds' stage.
func TestStagesAndPasses(t *testing.T) {
	f32 := array.Float32
	bin := func(op opset.BinaryOp, a, b int) Instr {
		return Instr{Kind: Binary, Op: uint8(op), Args: []int{a, b}, DType: f32}
	}
	sum := func(a int) Instr { return Instr{Kind: Reduce, Op: uint8(opset.Sum), Args: []int{a}, DType: f32} }
	p := NewRows([]array.DType{f32}, []bool{false}, 1, []Instr{
		sum(0),                    // r1
		{Kind: Count, DType: f32}, // r2
		bin(opset.Div, 1, 2),      // r3 mean
		bin(opset.Sub, 0, 3),      // r4
		bin(opset.Mul, 4, 4),      // r5
		sum(5),                    // r6
		bin(opset.Div, 6, 2),      // r7 var
		bin(opset.Div, 4, 7),      // r8
	}, []int{8, 3})
	want := []int{0, 1, 0, 1, 1, 1, 2, 2, 2}
	for r, w := range want {
		if got := p.Stage(r); got != w {
			t.Errorf("Stage(r%d) = %d, want %d", r, got, w)
		}
	}
	if got := p.Passes(); got != 3 {
		t.Errorf("Passes() = %d, want 3", got)
	}
	// a per-row output after the last fold adds no pass
	q := NewRows([]array.DType{f32}, []bool{false}, 1, []Instr{sum(0), bin(opset.Mul, 1, 1)}, []int{2})
	if got := q.Passes(); got != 1 {
		t.Errorf("sum of squares of a row: Passes() = %d, want 1", got)
	}
	if n, l := SplitRows([]int{3, 4, 5}, 2); n != 3 || l != 20 {
		t.Errorf("SplitRows([3 4 5], 2) = %d, %d, want 3, 20", n, l)
	}
}
