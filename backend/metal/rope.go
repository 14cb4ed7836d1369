package metal

import (
	"math"
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/internal/plan"
)

// RoPE plans rotary position embeddings of x into out (x's shape and
// dtype, row-major; float32, float16 or bfloat16), as cpu.RoPE: pair i of
// the first dims features of a row at position p along the axis before
// the last turns by (offset + p)·scale·base^(-2i/dims). The angles are
// computed in float32 on the GPU, so at positions in the thousands they
// differ from the CPU's (formed in float64) by a few units in 10^-4.
func RoPE(out, x View, dims int, traditional bool, base, scale float64, offset int) ([]Launch, error) {
	const op = "metal.RoPE"
	if err := checkViews(op, []string{"output", "input"}, out, x); err != nil {
		return nil, err
	}
	if err := checkGPUDType(op, x.DType); err != nil {
		return nil, err
	}
	if !x.DType.IsFloat() {
		return nil, array.Errorf(op, "dtype %v is not a float dtype", x.DType)
	}
	nd := len(x.Shape)
	if nd < 2 || !slices.Equal(out.Shape, x.Shape) || out.DType != x.DType || !rowMajor(out) {
		return nil, array.Errorf(op, "output %v %v (strides %v) for input %v %v: want the input's shape and dtype, row-major, at least 2-D",
			out.Shape, out.DType, out.Strides, x.Shape, x.DType)
	}
	n := x.Shape[nd-1]
	if dims <= 0 || dims%2 != 0 || dims > n {
		return nil, array.Errorf(op, "shape %v: dims %d must be even, positive and at most %d", x.Shape, dims, n)
	}
	if x.Size() == 0 {
		return nil, nil
	}
	l, err := newLines(op, x.Shape, nd-1, x)
	if err != nil {
		return nil, err
	}
	rows := l.outs
	if rows > int(maxGridDim.Load()) {
		return nil, array.Errorf(op, "%d rows exceed the GPU's grid limit", rows)
	}
	xArg, xOff := bindAt(x, false)
	oArg, _ := bindAt(out, true)
	trad := 0
	if traditional {
		trad = 1
	}
	f32 := func(v float64) int { return int(math.Float32bits(float32(v))) }
	p := params{}.add(n, rows, len(l.shape)).dims(l.shape).dims(l.strides[0]).
		add(xOff, x.Strides[nd-1], x.Shape[nd-2], dims, trad, f32(math.Log2(base)), f32(scale), offset)
	gx := min(n, groupSize)
	return []Launch{{Library: "rope.metal", Kernel: "rope_" + x.DType.String(), Buffers: []bufArg{xArg, oArg}, Params: p.bytes(),
		Grid: [3]int{n, rows, 1}, Group: [3]int{gx, min(rows, groupSize/gx), 1}, Fit: plan.FitThreads}}, nil
}
