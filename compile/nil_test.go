package compile_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// catch runs f and returns what it panicked with as an error. Unlike
// array.Try it recovers every panic, so that a nil dereference fails its
// case instead of ending the test binary.
func catch(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("%v", r)
			}
		}
	}()
	f()
	return nil
}

func wantOp(t *testing.T, err error, op string) {
	t.Helper()
	var e *array.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want an *array.Error from %s", err, op)
	}
	if e.Op != op {
		t.Fatalf("error %q is from %s, want %s", e, e.Op, op)
	}
}

// TestNilFunctionsAreErrors passes nil for each function, *Func, *Worker
// and option the package takes: each must panic with an *array.Error
// naming the operation, never a nil dereference.
func TestNilFunctionsAreErrors(t *testing.T) {
	x := array.FromSlice([]float32{1, 2, 3})
	double := func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Add(in[0], in[0])} }
	f := compile.Compile(double)
	defer f.Release()
	var nf *compile.Func
	var nw *compile.Worker
	nilOut := compile.Compile(func(...*array.Array) []*array.Array { return []*array.Array{nil} })
	defer nilOut.Release()
	cases := []struct {
		name, op string
		f        func()
	}{
		{"Compile option", "compile.Compile", func() { compile.Compile(double, nil) }},
		{"NewWorker option", "compile.NewWorker", func() { compile.NewWorker(compile.MaxTraces(2), nil) }},
		{"Func.Released", "compile.Func.Released", func() { nf.Released() }},
		{"Worker.Call", "compile.Call", func() { nw.Call(f, x) }},
		{"Worker.Stream", "compile.Worker.Stream", func() { nw.Stream() }},
		{"Worker.Traces", "compile.Worker.Traces", func() { nw.Traces() }},
		{"Fused function", "compile.Fused", func() { compile.Fused(nil, x) }},
		{"Fused input", "compile.Fused", func() { compile.Fused(double, nil) }},
		// inside a transform the function runs uncompiled: a nil output
		// is the same error as when it is traced
		{"Call uncompiled", "compile.Call", func() {
			graph.VJP(func(in ...*array.Array) []*array.Array { return nilOut.Call(in...) }, []*array.Array{x}, []*array.Array{x})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantOp(t, catch(c.f), c.op) })
	}
}

// TestNilReleaseAndCloseDoNothing: like closing a nil thing, releasing a
// nil *Func or closing a nil *Worker has nothing to do.
func TestNilReleaseAndCloseDoNothing(t *testing.T) {
	if err := catch(func() { (*compile.Func)(nil).Release() }); err != nil {
		t.Errorf("Release of a nil *Func: %v", err)
	}
	if err := catch(func() { (*compile.Worker)(nil).Close() }); err != nil {
		t.Errorf("Close of a nil *Worker: %v", err)
	}
}

// TestCompiledNilArguments: a nil input to a fused program's shape rule
// is its error, and a nil *Compiled is equivalent to no program.
func TestCompiledNilArguments(t *testing.T) {
	x := array.FromSlice([]float32{1, 2, 3})
	fused := compile.Fused(func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.Exp(ops.Add(in[0], in[0]))}
	}, x)
	if len(fused) != 1 {
		t.Fatalf("%d fused groups, want 1", len(fused))
	}
	c := fused[0]
	var err error
	if e := catch(func() { _, err = c.OutputShapes([]*array.Array{x, nil}) }); e != nil {
		t.Fatalf("OutputShapes panicked: %v", e)
	}
	wantOp(t, err, "compile.Compiled")
	var eq bool
	if e := catch(func() { eq = c.Equivalent((*compile.Compiled)(nil)) }); e != nil || eq {
		t.Fatalf("Equivalent(nil *Compiled) = %v, panic %v; want false", eq, e)
	}
}
