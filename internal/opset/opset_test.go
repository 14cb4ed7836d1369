package opset

import (
	"fmt"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// names lists every operation's name, family by family.
func names() map[string][]string {
	m := map[string][]string{}
	for op := range NumUnaryOps {
		m["unary"] = append(m["unary"], op.String())
	}
	for op := range NumBinaryOps {
		m["binary"] = append(m["binary"], op.String())
	}
	for op := range NumReduceOps {
		m["reduce"] = append(m["reduce"], op.String())
	}
	for op := range NumScanOps {
		m["scan"] = append(m["scan"], op.String())
	}
	for op := range NumArgOps {
		m["arg"] = append(m["arg"], op.String())
	}
	return m
}

// TestEveryOpHasOneName guards the name tables: a new constant without a
// name, or two operations of any family with one name (the Metal backend
// derives kernel names from them), fails here.
func TestEveryOpHasOneName(t *testing.T) {
	seen := map[string]string{}
	for family, ns := range names() {
		for i, n := range ns {
			if n == "" {
				t.Errorf("%s op %d has no name", family, i)
			}
			if f, ok := seen[n]; ok {
				t.Errorf("%s op %q has the name of a %s op", family, n, f)
			}
			seen[n] = family
		}
	}
	for _, c := range []struct{ got, want string }{
		{UnaryOp(200).String(), "UnaryOp(200)"},
		{BinaryOp(200).String(), "BinaryOp(200)"},
		{ReduceOp(200).String(), "ReduceOp(200)"},
		{ScanOp(200).String(), "ScanOp(200)"},
		{ArgOp(200).String(), "ArgOp(200)"},
	} {
		if c.got != c.want {
			t.Errorf("String() = %q, want %q", c.got, c.want)
		}
	}
}

var dtypes = array.DTypes()

// rule is one operation's Result and Supported.
type rule struct {
	name      string
	result    func(array.DType) (array.DType, bool)
	supported func(array.DeviceType, array.DType) bool
}

func rules() []rule {
	var rs []rule
	for op := range NumUnaryOps {
		rs = append(rs, rule{op.String(), op.Result, op.Supported})
	}
	for op := range NumBinaryOps {
		rs = append(rs, rule{op.String(), op.Result, op.Supported})
	}
	for op := range NumReduceOps {
		rs = append(rs, rule{op.String(), op.Result, op.Supported})
	}
	for op := range NumScanOps {
		rs = append(rs, rule{op.String(), op.Result, op.Supported})
	}
	for op := range NumArgOps {
		rs = append(rs, rule{op.String(), op.Result, op.Supported})
	}
	return rs
}

// TestCapabilities checks the device rules against Result: the CPU has
// every kernel Result defines, the GPU a subset without float64.
func TestCapabilities(t *testing.T) {
	for _, r := range rules() {
		for _, dt := range dtypes {
			_, ok := r.result(dt)
			if got := r.supported(array.DeviceCPU, dt); got != ok {
				t.Errorf("%s %v: CPU supported %v, Result %v", r.name, dt, got, ok)
			}
			if r.supported(array.DeviceGPU, dt) && (!ok || !HasDType(array.DeviceGPU, dt)) {
				t.Errorf("%s %v: GPU supported without a CPU kernel or on float64", r.name, dt)
			}
		}
		if _, ok := r.result(array.DType(200)); ok {
			t.Errorf("%s accepts an invalid dtype", r.name)
		}
	}
}

// TestGPUGaps lists what the GPU lacks beyond float64, so that a change
// to Metal's kernels shows here.
func TestGPUGaps(t *testing.T) {
	var gaps []string
	for _, r := range rules() {
		for _, dt := range dtypes {
			if _, ok := r.result(dt); ok && HasDType(array.DeviceGPU, dt) && !r.supported(array.DeviceGPU, dt) {
				gaps = append(gaps, r.name+"/"+dt.String())
			}
		}
	}
	want := "[Sin/complex64 Cos/complex64 Tan/complex64 Sinh/complex64 Cosh/complex64 Tanh/complex64 Pow/complex64 " +
		"Sum/complex64 Prod/complex64 All/complex64 Any/complex64 CumSum/complex64 CumProd/complex64]"
	if got := fmt.Sprint(gaps); got != want {
		t.Errorf("GPU gaps:\n got %s\nwant %s", got, want)
	}
}

// TestSumDTypes checks Sum's and Prod's result dtypes against MLX's rule,
// and that both devices take every integer dtype.
func TestSumDTypes(t *testing.T) {
	want := map[array.DType]array.DType{
		array.Bool: array.Int32, array.Int8: array.Int32, array.Int16: array.Int32, array.Int32: array.Int32,
		array.Int64: array.Int64, array.Uint8: array.Uint32, array.Uint16: array.Uint32, array.Uint32: array.Uint32,
		array.Uint64: array.Uint64, array.Float16: array.Float16, array.Float32: array.Float32,
	}
	for dt, w := range want {
		for _, op := range []ReduceOp{Sum, Prod} {
			if got, ok := op.Result(dt); !ok || got != w {
				t.Errorf("%v(%v) = %v %v, want %v", op, dt, got, ok, w)
			}
		}
		if got, _ := Max.Result(dt); got != dt {
			t.Errorf("Max(%v) = %v", dt, got)
		}
	}
	for _, dt := range []array.DType{array.Int8, array.Int16, array.Uint16, array.Uint32, array.Uint64} {
		for _, d := range []array.DeviceType{array.DeviceCPU, array.DeviceGPU} {
			if !HasDType(d, dt) {
				t.Errorf("HasDType(%v, %v) = false", d, dt)
			}
			if err := CheckDTypes("ops.Add", d, array.Float32, dt); err != nil {
				t.Errorf("CheckDTypes(%v, %v) = %v", d, dt, err)
			}
		}
	}
}
