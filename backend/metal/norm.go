package metal

import (
	"math"
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/internal/plan"
)

// LayerNorm plans (x - mean)/sqrt(var + eps)·w + b over the last axis of x
// into out (x's shape and dtype, row-major; float32, float16 or
// bfloat16), as cpu.LayerNorm. w and b are vectors as long as that axis
// in x's dtype, or Views without Mem for none. Each row is one
// threadgroup's, in three passes computing in float32.
func LayerNorm(out, x, w, b View, eps float64) ([]Launch, error) {
	return normPlan("metal.LayerNorm", "layer_norm_", out, x, w, b, eps)
}

// RMSNorm plans x/sqrt(mean(x²) + eps)·w over the last axis of x into
// out, as LayerNorm.
func RMSNorm(out, x, w View, eps float64) ([]Launch, error) {
	return normPlan("metal.RMSNorm", "rms_norm_", out, x, w, View{}, eps)
}

func normPlan(op, base string, out, x, w, b View, eps float64) ([]Launch, error) {
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
	if nd == 0 || !slices.Equal(out.Shape, x.Shape) || out.DType != x.DType || !rowMajor(out) {
		return nil, array.Errorf(op, "output %v %v (strides %v) for input %v %v: want the input's shape and dtype, row-major",
			out.Shape, out.DType, out.Strides, x.Shape, x.DType)
	}
	n := x.Shape[nd-1]
	for _, v := range []View{w, b} {
		if v.Mem == nil {
			continue
		}
		if err := checkViews(op, []string{"weight"}, v); err != nil {
			return nil, err
		}
		if len(v.Shape) != 1 || v.Shape[0] != n || v.DType != x.DType {
			return nil, array.Errorf(op, "weight or bias %v %v for input %v %v", v.Shape, v.DType, x.Shape, x.DType)
		}
	}
	if x.Size() == 0 {
		return nil, nil
	}
	l, err := newLines(op, x.Shape, nd-1, x)
	if err != nil {
		return nil, err
	}
	rows := l.outs
	xArg, xOff := bindAt(x, false)
	oArg, _ := bindAt(out, true)
	p := params{}.add(n, rows, len(l.shape)).dims(l.shape).dims(l.strides[0]).add(xOff, x.Strides[nd-1])
	bufs := []bufArg{xArg}
	for _, v := range []View{w, b} {
		if v.Mem == nil {
			bufs = append(bufs, xArg)
			p = p.add(0, 0, 0)
			continue
		}
		arg, off := bindAt(v, false)
		bufs = append(bufs, arg)
		p = p.add(1, off, v.Strides[0])
	}
	p = p.add(int(math.Float32bits(float32(eps))))
	tg := 256
	if n > 8192 {
		tg = 1024
	}
	groups := cappedGroups(rows)
	return []Launch{{Library: "norm.metal", Kernel: base + x.DType.String(), Buffers: append(bufs, oArg), Params: p.bytes(),
		Grid: [3]int{groups * tg, 1, 1}, Group: [3]int{tg, 1, 1}, Fit: plan.FitGroups}}, nil
}
