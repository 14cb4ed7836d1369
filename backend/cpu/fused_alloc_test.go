package cpu

import (
	"testing"
	"unsafe"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/fused"
	"github.com/fathom-go/fathom/internal/opset"
)

// TestRunFusedSmallAllocatesNothing guards the small fused call: its
// arithmetic on 16 elements takes less time than an allocation, and a
// call allocated 12 times (15 on tiles) before its state was kept on the
// stack, and made package compile's operands escape when it kept them.
// 5 x tanh(x*w) runs as a chain in float32 where there is the kernel and
// on tiles in float64.
func TestRunFusedSmallAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop a quarter of what it is given")
	}
	const n = 16
	for _, dt := range []array.DType{array.Float32, array.Float64} {
		var instrs []fused.Instr
		y := 0
		for range 5 {
			instrs = append(instrs, fused.Instr{Kind: fused.Binary, Op: uint8(opset.Mul), Args: []int{y, 1}, DType: dt})
			instrs = append(instrs, fused.Instr{Kind: fused.Unary, Op: uint8(opset.Tanh), Args: []int{len(instrs) + 1}, DType: dt})
			y = len(instrs) + 1
		}
		p := fused.New([]array.DType{dt, dt}, instrs, []int{y})
		buf := func() Buf {
			data := make([]float64, n) // zeros: the values do not matter here
			return Buf{Data: unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), n*dt.Size()), DType: dt, Shape: []int{n}, Strides: []int{1}}
		}
		xb, wb, yb := buf(), buf(), buf()
		run := func() {
			// on the stack, as package compile passes them, unless
			// RunFused keeps them
			ins, outs := [2]Buf{xb, wb}, [1]Buf{yb}
			if err := RunFused(p, outs[:], ins[:]); err != nil {
				t.Fatal(err)
			}
		}
		run() // resolves the program
		if got := testing.AllocsPerRun(100, run); got != 0 {
			t.Errorf("%v: RunFused of 16 elements allocates %v times a call, want 0", dt, got)
		}
	}
}

// TestRunFusedBeyondTheStackRoom runs a small call of a program with more
// inputs, outputs and steps than a call keeps on its stack (runState),
// whose slices then come from the heap, and wants float32 arithmetic in
// the same order.
func TestRunFusedBeyondTheStackRoom(t *testing.T) {
	const n, nIn = 16, smallIns + 3
	f32 := array.Float32
	dts := make([]array.DType, nIn)
	xs := make([][]float32, nIn)
	ins := make([]Buf, nIn)
	for i := range dts {
		dts[i] = f32
		xs[i] = make([]float32, n)
		for j := range xs[i] {
			xs[i][j] = float32(i+1)*0.25 + float32(j)*0.125
		}
		ins[i] = Buf{Data: unsafe.Slice((*byte)(unsafe.Pointer(&xs[i][0])), 4*n), DType: f32, Shape: []int{n}, Strides: []int{1}}
	}
	// r = x0; then r = (r + x_i) * x_i for each further input, every
	// product an output too
	var instrs []fused.Instr
	var outputs []int
	r := 0
	for i := 1; i < nIn; i++ {
		instrs = append(instrs, fused.Instr{Kind: fused.Binary, Op: uint8(opset.Add), Args: []int{r, i}, DType: f32})
		instrs = append(instrs, fused.Instr{Kind: fused.Binary, Op: uint8(opset.Mul), Args: []int{nIn + len(instrs) - 1, i}, DType: f32})
		r = nIn + len(instrs) - 1
		outputs = append(outputs, r)
	}
	if len(instrs) <= smallSteps || len(outputs) <= smallOuts {
		t.Fatalf("%d steps and %d outputs fit the room: the test does not test", len(instrs), len(outputs))
	}
	p := fused.New(dts, instrs, outputs)
	got := make([][]float32, len(outputs))
	outs := make([]Buf, len(outputs))
	for k := range outs {
		got[k] = make([]float32, n)
		outs[k] = Buf{Data: unsafe.Slice((*byte)(unsafe.Pointer(&got[k][0])), 4*n), DType: f32, Shape: []int{n}, Strides: []int{1}}
	}
	if err := RunFused(p, outs, ins); err != nil {
		t.Fatal(err)
	}
	for j := range n {
		want := xs[0][j]
		for i := 1; i < nIn; i++ {
			want = (want + xs[i][j]) * xs[i][j]
			if g := got[i-1][j]; g != want {
				t.Fatalf("output %d element %d: %v, want %v", i-1, j, g, want)
			}
		}
	}
}
