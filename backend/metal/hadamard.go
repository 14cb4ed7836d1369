package metal

import (
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/internal/plan"
)

// HadamardMaxLength is the longest line HadamardTransform's kernel
// transforms: a line lives in threadgroup memory as float32 while its
// butterflies run, and 4096 of them fill 16 KiB, half of what every Apple
// GPU gives a threadgroup. ops transforms longer lines as matrices of
// shorter ones.
const HadamardMaxLength = 4096

// HadamardTransform plans scale·H·x for every line x along the last axis
// of in into out (same shape and dtype, float32, float16 or bfloat16; out
// row-major), H the Sylvester-ordered Hadamard matrix of the line's
// length, a power of two up to 4096, as cpu.HadamardTransform computes it:
// in is copied to out, then each threadgroup transforms lines of out in
// place through threadgroup memory, in float32.
func HadamardTransform(out, in View, scale float64) ([]Launch, error) {
	const op = "metal.HadamardTransform"
	if err := checkViews(op, []string{"output", "input"}, out, in); err != nil {
		return nil, err
	}
	if err := checkGPUDType(op, in.DType); err != nil {
		return nil, err
	}
	if !in.DType.IsFloat() {
		return nil, array.Errorf(op, "dtype %v is not a float dtype", in.DType)
	}
	if out.DType != in.DType {
		return nil, array.Errorf(op, "output dtype %v, want %v", out.DType, in.DType)
	}
	n := 1
	if len(in.Shape) > 0 {
		n = in.Shape[len(in.Shape)-1]
	}
	if n&(n-1) != 0 {
		return nil, array.Errorf(op, "last axis of shape %v has length %d, not a power of two", in.Shape, n)
	}
	if n > HadamardMaxLength {
		return nil, array.Errorf(op, "last axis of shape %v has length %d; the GPU kernel takes at most %d", in.Shape, n, HadamardMaxLength)
	}
	if !rowMajor(out) {
		return nil, array.Errorf(op, "output of shape %v and strides %v is not row-major", out.Shape, out.Strides)
	}
	if out.Size() == 0 {
		return nil, nil
	}
	ls, err := Copy(out, in)
	if err != nil {
		return nil, err
	}
	lines := out.Size() / n
	arg, off := bindAt(out, true)
	tg := min(256, max(32, n/2))
	groups := cappedGroups(lines)
	p := params{}.add(n, lines, int(math.Float32bits(float32(scale))), off)
	return append(ls, Launch{Library: "hadamard.metal", Kernel: "hadamard_" + in.DType.String(), Buffers: []bufArg{arg},
		Params: p.bytes(), Grid: [3]int{groups * tg, 1, 1}, Group: [3]int{tg, 1, 1}, Fit: plan.FitGroups}), nil
}

// rowMajor reports whether v is row-major contiguous.
func rowMajor(v View) bool {
	s := 1
	for i := len(v.Shape) - 1; i >= 0; i-- {
		if v.Shape[i] == 0 {
			return true
		}
		if v.Shape[i] != 1 && v.Strides[i] != s {
			return false
		}
		s *= v.Shape[i]
	}
	return true
}
