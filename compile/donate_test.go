package compile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// TestCallDonatingFreesTheInputs: a donated input's buffer goes back to
// the pool once the step has read it, without a collection, and reading
// the donated array afterwards is an error that says why.
func TestCallDonatingFreesTheInputs(t *testing.T) {
	f := func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.MatMul(ops.MatMul(in[0], in[1]), in[1])}
	}
	c, in, wants := compileOn(t, f, 9, 10)
	want := wants[0]
	c.Call(in...)
	base := noCollections(t)
	x := matrices(9)[0]
	if got := array.ActiveMemory() - base; got != 4*n*n {
		t.Fatalf("ActiveMemory rose by %d for a new input, want %d", got, 4*n*n)
	}
	out := c.CallDonating([]int{0}, x, in[1])[0]
	if err := out.Eval(); err != nil {
		t.Fatal(err)
	}
	// x and the intermediate are back, the output is new
	if got := array.ActiveMemory() - base; got != 4*n*n {
		t.Errorf("ActiveMemory rose by %d, want the output's %d: x was not freed", got, 4*n*n)
	}
	if d := cmp.Diff(want, out, arraytest.Approx(0, 0)); d != "" {
		t.Errorf("result differs (-want +got):\n%s", d)
	}
	for _, read := range []func() error{
		x.Eval,
		func() error { _, err := array.ToSlice[float32](x); return err },
		ops.AddScalar(x, 1).Eval,
	} {
		var e *array.Error
		if err := read(); !errors.As(err, &e) || !strings.Contains(e.Msg, "donated") {
			t.Errorf("reading a donated array: %v; want an *array.Error saying it was donated", err)
		}
	}
	if err := in[1].Eval(); err != nil {
		t.Errorf("the input not donated: %v", err)
	}
}

// TestCallDonatingKeepsWhatItCannotGive: an input that is also an output,
// one passed twice, and one the function captured stay readable.
func TestCallDonatingKeepsWhatItCannotGive(t *testing.T) {
	captured := matrices(11)[0]
	f := func(in ...*array.Array) []*array.Array {
		return []*array.Array{in[0], ops.MatMul(in[1], in[2]), ops.MatMul(in[3], captured)}
	}
	c := compile.Compile(f)
	defer c.Release()
	m := matrices(12, 13)
	out := c.CallDonating([]int{0, 1, 2, 3}, m[0], m[1], m[1], captured)
	if err := array.Eval(out...); err != nil {
		t.Fatal(err)
	}
	want := f(m[0], m[1], m[1], captured)
	for i, a := range append(m, captured) {
		if err := a.Eval(); err != nil {
			t.Errorf("array %d was given up: %v", i, err)
		}
	}
	for i := range out {
		if d := cmp.Diff(want[i], out[i], arraytest.Approx(0, 0)); d != "" {
			t.Errorf("output %d differs (-want +got):\n%s", i, d)
		}
	}
	if err := array.Try(func() { c.CallDonating([]int{4}, m[0], m[1], m[1], captured) }); err == nil {
		t.Error("donating input 4 of 4 did not panic")
	}
}

// TestCallDonatingNilArguments: nil workers, functions and inputs are the
// errors Call gives for them.
func TestCallDonatingNilArguments(t *testing.T) {
	x := matrices(14)[0]
	f := compile.Compile(func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Exp(in[0])} })
	defer f.Release()
	var nw *compile.Worker
	var nf *compile.Func
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"nil worker", func() { nw.CallDonating(f, []int{0}, x) }},
		{"nil function", func() { nf.CallDonating([]int{0}, x) }},
		{"nil input", func() { f.CallDonating([]int{0}, nil) }},
	} {
		wantOp(t, catch(c.f), "compile.Call")
	}
	wantOp(t, catch(func() { f.CallDonating([]int{-1}, x) }), "compile.CallDonating")
	// the uncompiled path (a tracer input) ignores the donation
	_, vjps := graph.VJP(func(in ...*array.Array) []*array.Array { return f.CallDonating([]int{0}, in...) },
		[]*array.Array{x}, []*array.Array{x})
	if err := array.Eval(append(vjps, x)...); err != nil {
		t.Errorf("CallDonating inside a transform: %v", err)
	}
}
