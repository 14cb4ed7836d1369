package metal_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/internal/strided"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/internal/opset"
)

func view(dt array.DType, shape ...int) metal.View {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return metal.View{Mem: newMem(n * dt.Size()), DType: dt, Shape: shape, Strides: strided.RowMajor(shape)}
}

func TestPlansRejectBadOperands(t *testing.T) {
	f32 := array.Float32
	short := view(f32, 4)
	short.Shape, short.Strides = []int{5}, []int{1}
	reversed := view(f32, 4)
	reversed.Strides = []int{-1} // reaches elements -3..0
	noMem := view(f32, 2)
	noMem.Mem = nil
	for _, tc := range []struct {
		name string
		plan func() ([]metal.Launch, error)
		want string
	}{
		{"wrong result dtype", func() ([]metal.Launch, error) { return metal.Unary(opset.IsNaN, view(f32, 3), view(f32, 3)) },
			"IsNaN of float32 gives bool, not float32"},
		{"unknown op", func() ([]metal.Launch, error) { return metal.Unary(opset.UnaryOp(99), view(f32, 3), view(f32, 3)) },
			"UnaryOp(99) is not defined for dtype float32"},
		{"float function of ints", func() ([]metal.Launch, error) {
			return metal.Unary(opset.Exp, view(array.Int32, 3), view(array.Int32, 3))
		}, "Exp is not defined for dtype int32"},
		{"view past the memory", func() ([]metal.Launch, error) { return metal.Copy(short, view(f32, 5)) },
			"reaches elements [0, 5) of a 4-element buffer"},
		{"negative stride before the memory", func() ([]metal.Launch, error) { return metal.Copy(view(f32, 4), reversed) },
			"reaches elements [-3, 1)"},
		{"no memory", func() ([]metal.Launch, error) { return metal.Copy(view(f32, 2), noMem) }, "input: no memory"},
		{"strides missing", func() ([]metal.Launch, error) {
			v := view(f32, 2, 3)
			v.Strides = v.Strides[:1]
			return metal.Copy(view(f32, 2, 3), v)
		}, "1 strides for shape [2 3]"},
		{"binary dtypes differ", func() ([]metal.Launch, error) {
			return metal.Binary(opset.Add, view(f32, 3), view(f32, 3), view(array.Int32, 3))
		}, "Add: dtypes float32 and int32 differ"},
		{"complex power", func() ([]metal.Launch, error) {
			c := array.Complex64
			return metal.Binary(opset.Pow, view(c, 3), view(c, 3), view(c, 3))
		}, "Pow of complex64 is not supported on the GPU"},
		{"where condition", func() ([]metal.Launch, error) {
			return metal.Where(view(f32, 3), view(f32, 3), view(f32, 3), view(f32, 3))
		}, "condition has dtype float32, not bool"},
		{"float64 fill", func() ([]metal.Launch, error) { return metal.Fill(view(array.Float64, 3), 1) },
			"float64 is not supported on the GPU (Metal has no double)"},
	} {
		ls, err := tc.plan()
		var ae *array.Error
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "metal.") {
			t.Errorf("%s: %d launches, error %v; want an *array.Error containing %q", tc.name, len(ls), err, tc.want)
		}
	}
}

func TestEmptyOutputsNeedNoLaunch(t *testing.T) {
	f32 := array.Float32
	for name, plan := range map[string]func() ([]metal.Launch, error){
		"Copy":  func() ([]metal.Launch, error) { return metal.Copy(view(f32, 0, 3), view(f32, 0, 3)) },
		"Unary": func() ([]metal.Launch, error) { return metal.Unary(opset.Exp, view(f32, 0), view(f32, 0)) },
		"Binary": func() ([]metal.Launch, error) {
			return metal.Binary(opset.Add, view(f32, 2, 0), view(f32, 2, 0), view(f32, 2, 0))
		},
		"Fill":   func() ([]metal.Launch, error) { return metal.Fill(view(f32, 0), 1) },
		"Arange": func() ([]metal.Launch, error) { return metal.Arange(view(f32, 0), 0, 1) },
		"Eye":    func() ([]metal.Launch, error) { return metal.Eye(view(f32, 0, 4), 0) },
	} {
		if ls, err := plan(); err != nil || len(ls) != 0 {
			t.Errorf("%s of an empty array: %d launches, %v", name, len(ls), err)
		}
	}
}

// TestVariantsFollowTheLayout checks which kernel each layout selects:
// one contiguous run, one broadcast element, or the general strided kernel
// (merging dimensions first, so a row-major view of any rank is one run).
func TestVariantsFollowTheLayout(t *testing.T) {
	f32 := array.Float32
	scalar := view(f32, 1)
	scalar.Shape, scalar.Strides = []int{4, 5}, []int{0, 0}
	col := view(f32, 4)
	col.Shape, col.Strides = []int{4, 5}, []int{1, 0}
	trans := view(f32, 5, 4)
	trans.Shape, trans.Strides = []int{4, 5}, []int{1, 4}
	for _, tc := range []struct {
		a, b   metal.View
		kernel string
	}{
		{view(f32, 4, 5), view(f32, 4, 5), "binary_Add_float32_vv"},
		{scalar, view(f32, 4, 5), "binary_Add_float32_sv"},
		{view(f32, 4, 5), scalar, "binary_Add_float32_vs"},
		{view(f32, 4, 5), col, "binary_Add_float32_strided"},
		{trans, view(f32, 4, 5), "binary_Add_float32_strided"},
	} {
		ls, err := metal.Binary(opset.Add, view(f32, 4, 5), tc.a, tc.b)
		if err != nil || len(ls) != 1 || ls[0].Kernel != tc.kernel {
			t.Errorf("a strides %v, b strides %v: %v %v, want %s", tc.a.Strides, tc.b.Strides, kernelNames(ls), err, tc.kernel)
			continue
		}
		if l := ls[0]; l.Library != "binary.metal" || !l.Buffers[2].Write || l.Buffers[0].Write || l.Grid[0]*l.Grid[1]*l.Grid[2] != 20 {
			t.Errorf("%s: launch %+v", tc.kernel, l)
		}
	}
}
