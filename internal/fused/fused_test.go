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
