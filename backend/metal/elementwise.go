package metal

import (
	"fmt"
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/internal/plan"
	"github.com/fathom-go/fathom/internal/opset"
)

// The elementwise plans. Each validates its views, collapses their common
// iteration space and picks the kernel variant: contiguous (every operand
// one run in the same order), scalar-broadcast (an operand is one element
// for the whole output), or general strided (64-bit offsets, any strides,
// including 0 and negative). Empty outputs need no launch.

// unsupported is the error of an operation that the GPU has no kernel
// for: one that is not defined for dt at all, or one that only the CPU
// has.
func unsupported(name string, op fmt.Stringer, dt array.DType, defined bool) error {
	if !defined {
		return array.Errorf(name, "%v is not defined for dtype %v", op, dt)
	}
	return array.Errorf(name, "%v of %v is not supported on the GPU", op, dt)
}

// checkViews validates views (the first is the output); the caller has
// checked that they have one shape.
func checkViews(op string, names []string, views ...View) error {
	for i, v := range views {
		if err := v.check(op, names[i]); err != nil {
			return err
		}
	}
	return nil
}

// ewLaunch returns the launch of kernel base+"_"+variant of library lib
// over views (the last `writes` of them written). Contiguous variants get
// p = extra ++ [n]; the strided variant p = extra ++ the strided layout.
func ewLaunch(op, lib, base, variant string, l layout, views []View, writes int, extra ...int64) ([]Launch, error) {
	ln := Launch{Library: lib, Kernel: base + "_" + variant, Fit: plan.FitThreads}
	if variant == "strided" {
		grid, group, err := stridedGrid(op, l.shape)
		if err != nil {
			return nil, err
		}
		var p []int64
		ln.Buffers, p = stridedArgs(l, views, writes)
		ln.Params = packParams(append(extra, p...))
		ln.Grid, ln.Group = grid, group
		return []Launch{ln}, nil
	}
	n := l.shape[0]
	ln.Buffers = contigArgs(views, writes)
	ln.Params = packParams(append(extra, int64(n)))
	ln.Grid, ln.Group = contigGrid(n)
	return []Launch{ln}, nil
}

// Copy returns the plan of out = in converted to out's dtype (numpy's
// astype: floats to integers truncate toward zero, NaN and out-of-range
// values give 0, anything to bool is "not zero", complex to real keeps the
// real part). in and out may both be strided, and in may broadcast.
func Copy(out, in View) ([]Launch, error) {
	const op = "metal.Copy"
	if err := checkViews(op, []string{"output", "input"}, out, in); err != nil {
		return nil, err
	}
	if out.Size() == 0 {
		return nil, nil
	}
	l := collapse(out.Shape, in, out)
	variant := "strided"
	switch {
	case l.flat(1, 1) && l.flat(0, 1):
		variant = "contig"
	case l.flat(1, 1) && l.flat(0, 0):
		variant = "scalar"
	}
	return ewLaunch(op, "copy.metal", "copy_"+in.DType.String()+"_"+out.DType.String(), variant, l, []View{in, out}, 1)
}

// Unary returns the plan of out = op(x) elementwise; out's dtype must be
// op.Result(x.DType), and the GPU lacks the complex trigonometric and
// hyperbolic functions (see opset.UnaryOp.Supported).
func Unary(op opset.UnaryOp, out, x View) ([]Launch, error) {
	const name = "metal.Unary"
	if err := checkViews(name, []string{"output", "input"}, out, x); err != nil {
		return nil, err
	}
	want, ok := op.Result(x.DType)
	if !ok || !op.Supported(array.DeviceGPU, x.DType) {
		return nil, unsupported(name, op, x.DType, ok)
	}
	if out.DType != want {
		return nil, array.Errorf(name, "%v of %v gives %v, not %v", op, x.DType, want, out.DType)
	}
	if out.Size() == 0 {
		return nil, nil
	}
	l := collapse(out.Shape, x, out)
	variant := "strided"
	if l.flat(1, 1) && l.flat(0, 1) {
		variant = "contig"
	}
	return ewLaunch(name, "unary.metal", "unary_"+op.String()+"_"+x.DType.String(), variant, l, []View{x, out}, 1)
}

// Binary returns the plan of out = op(a, b) elementwise: a and b have one
// dtype and out's shape (broadcast operands have zero strides), and out's
// dtype is op.Result(a.DType). The GPU lacks Pow of complex64.
func Binary(op opset.BinaryOp, out, a, b View) ([]Launch, error) {
	const name = "metal.Binary"
	if err := checkViews(name, []string{"output", "first operand", "second operand"}, out, a, b); err != nil {
		return nil, err
	}
	if a.DType != b.DType {
		return nil, array.Errorf(name, "%v: dtypes %v and %v differ", op, a.DType, b.DType)
	}
	want, ok := op.Result(a.DType)
	if !ok || !op.Supported(array.DeviceGPU, a.DType) {
		return nil, unsupported(name, op, a.DType, ok)
	}
	if out.DType != want {
		return nil, array.Errorf(name, "%v of %v gives %v, not %v", op, a.DType, want, out.DType)
	}
	if out.Size() == 0 {
		return nil, nil
	}
	l := collapse(out.Shape, a, b, out)
	variant := "strided"
	if l.flat(2, 1) {
		switch {
		case l.flat(0, 1) && l.flat(1, 1):
			variant = "vv"
		case l.flat(0, 0) && l.flat(1, 1):
			variant = "sv"
		case l.flat(0, 1) && l.flat(1, 0):
			variant = "vs"
		}
	}
	return ewLaunch(name, "binary.metal", "binary_"+op.String()+"_"+a.DType.String(), variant, l, []View{a, b, out}, 1)
}

// bitsName names the element size of dt for the kernels that only move
// bits (where, fill, eye).
func bitsName(dt array.DType) string {
	switch dt.Size() {
	case 1:
		return "b8"
	case 2:
		return "b16"
	case 4:
		return "b32"
	}
	return "b64"
}

// Where returns the plan of out = cond ? x : y elementwise. cond is Bool;
// x, y and out have one dtype; all have out's shape (broadcast operands
// have zero strides).
func Where(out, cond, x, y View) ([]Launch, error) {
	const op = "metal.Where"
	if err := checkViews(op, []string{"output", "condition", "x", "y"}, out, cond, x, y); err != nil {
		return nil, err
	}
	if cond.DType != array.Bool {
		return nil, array.Errorf(op, "condition has dtype %v, not bool", cond.DType)
	}
	if x.DType != out.DType || y.DType != out.DType {
		return nil, array.Errorf(op, "dtypes %v and %v for a result of dtype %v", x.DType, y.DType, out.DType)
	}
	if out.Size() == 0 {
		return nil, nil
	}
	l := collapse(out.Shape, cond, x, y, out)
	variant := "strided"
	if l.flat(0, 1) && l.flat(1, 1) && l.flat(2, 1) && l.flat(3, 1) {
		variant = "contig"
	}
	return ewLaunch(op, "where.metal", "where_"+bitsName(out.DType), variant, l, []View{cond, x, y, out}, 1)
}

// scalarBits returns v converted to dt as the CPU backend converts a
// float64 (cpu.Copy), as the little-endian bits of one element.
func scalarBits(v float64, dt array.DType) uint64 {
	toInt := func() int64 {
		if v != v || v >= 9.223372036854775807e18 || v < -9.223372036854775808e18 {
			return 0
		}
		return int64(v)
	}
	switch dt {
	case array.Bool:
		if v != 0 {
			return 1
		}
		return 0
	case array.Uint8, array.Int8:
		return uint64(uint8(toInt()))
	case array.Int16, array.Uint16:
		return uint64(uint16(toInt()))
	case array.Uint32:
		return uint64(uint32(toInt()))
	case array.Uint64:
		if v >= 9.223372036854775807e18 && v < 1.8446744073709551616e19 {
			return uint64(v)
		}
		return uint64(toInt())
	case array.Int32:
		return uint64(uint32(int32(toInt())))
	case array.Int64:
		return uint64(toInt())
	case array.Float16:
		return uint64(array.NewF16(float32(v)))
	case array.BFloat16:
		return uint64(array.NewBF16(float32(v)))
	case array.Float32, array.Complex64:
		return uint64(math.Float32bits(float32(v)))
	}
	return math.Float64bits(v)
}

// fillLayout checks the output of a creation plan and returns its
// collapsed layout and kernel variant; empty reports an output with no
// elements, which needs no launch.
func fillLayout(op string, out View) (l layout, variant string, empty bool, err error) {
	if err := out.check(op, "output"); err != nil {
		return layout{}, "", false, err
	}
	if out.Size() == 0 {
		return layout{}, "", true, nil
	}
	l = collapse(out.Shape, out)
	variant = "strided"
	if l.flat(0, 1) {
		variant = "contig"
	}
	return l, variant, false, nil
}

// Fill returns the plan of setting every element of out to v converted
// to out's dtype (as cpu.Copy converts a float64: Full, Zeros, Ones).
func Fill(out View, v float64) ([]Launch, error) {
	const op = "metal.Fill"
	l, variant, empty, err := fillLayout(op, out)
	if err != nil || empty {
		return nil, err
	}
	return ewLaunch(op, "create.metal", "fill_"+bitsName(out.DType), variant, l, []View{out}, 1,
		int64(scalarBits(v, out.DType)))
}

// Arange returns the plan of filling out, in row-major order, with
// start + i*step converted to out's dtype. Integer outputs with integral
// start and step are exact (64-bit integer arithmetic); otherwise the
// value is computed in float32 (Metal has no double) as fma(i, step,
// start), which the CPU computes in float64: float32 outputs agree to
// about an ulp of the largest value.
func Arange(out View, start, step float64) ([]Launch, error) {
	const op = "metal.Arange"
	l, variant, empty, err := fillLayout(op, out)
	if err != nil || empty {
		return nil, err
	}
	integral := int64(0)
	s0, s1 := int64(math.Float32bits(float32(start))), int64(math.Float32bits(float32(step)))
	if !out.DType.IsInexact() && out.DType != array.Bool && start == math.Trunc(start) && step == math.Trunc(step) &&
		math.Abs(start) < 1<<53 && math.Abs(step) < 1<<53 {
		integral, s0, s1 = 1, int64(start), int64(step)
	}
	return ewLaunch(op, "create.metal", "arange_"+out.DType.String(), variant, l, []View{out}, 1, integral, s0, s1)
}

// Eye returns the plan of filling the 2-D out with ones on diagonal k
// (k > 0 above the main diagonal, k < 0 below) and zeros elsewhere.
func Eye(out View, k int) ([]Launch, error) {
	const op = "metal.Eye"
	if err := out.check(op, "output"); err != nil {
		return nil, err
	}
	if out.Size() == 0 {
		return nil, nil
	}
	// Not collapsed: the kernel needs the row and the column.
	l := layout{shape: out.Shape, strides: [][]int{out.Strides}}
	kk := int64(max(min(k, out.Shape[1]), -out.Shape[0]))
	return ewLaunch(op, "create.metal", "eye_"+bitsName(out.DType), "strided", l, []View{out}, 1,
		int64(scalarBits(1, out.DType)), kk)
}
