package array_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/internal/strided"

	"github.com/fathom-go/fathom/array"
)

// roundTrip builds an array from data with the given shape and checks its
// metadata and that ToSlice gives data back.
func roundTrip[T array.Elem](t *testing.T, data []T, shape ...int) {
	t.Helper()
	a := array.FromSlice(data, shape...)
	wantShape := shape
	if shape == nil {
		wantShape = []int{len(data)}
	}
	if !slices.Equal(a.Shape(), wantShape) || a.Ndim() != len(wantShape) || a.Size() != len(data) {
		t.Errorf("%T %v: Shape %v Ndim %d Size %d", data, shape, a.Shape(), a.Ndim(), a.Size())
	}
	dt := array.DTypeOf[T]()
	if a.DType() != dt || a.NBytes() != len(data)*dt.Size() {
		t.Errorf("%T: DType %v NBytes %d", data, a.DType(), a.NBytes())
	}
	if !a.Evaluated() || !a.RowMajor() {
		t.Errorf("%T: a slice's array should be evaluated and row-major", data)
	}
	got, err := array.ToSlice[T](a)
	if err != nil {
		t.Fatalf("ToSlice[%T]: %v", data, err)
	}
	if !equalBits(got, data) {
		t.Errorf("ToSlice[%T] = %v, want %v", data, got, data)
	}
}

// equalBits compares element by element, treating NaN as equal to NaN.
func equalBits[T array.Elem](a, b []T) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		x, y := any(a[i]), any(b[i])
		switch xv := x.(type) {
		case float32:
			if math.Float32bits(xv) != math.Float32bits(y.(float32)) {
				return false
			}
		case float64:
			if math.Float64bits(xv) != math.Float64bits(y.(float64)) {
				return false
			}
		case complex64:
			yv := y.(complex64)
			if math.Float32bits(real(xv)) != math.Float32bits(real(yv)) || math.Float32bits(imag(xv)) != math.Float32bits(imag(yv)) {
				return false
			}
		default:
			if x != y {
				return false
			}
		}
	}
	return true
}

func TestFromSliceToSliceEveryDType(t *testing.T) {
	nan32, nan64 := float32(math.NaN()), math.NaN()
	roundTrip(t, []bool{true, false, true, true, false, false}, 2, 3)
	roundTrip(t, []uint8{0, 1, 127, 128, 255, 42}, 3, 2)
	roundTrip(t, []int32{math.MinInt32, -1, 0, 1, math.MaxInt32, 7}, 6)
	roundTrip(t, []int64{math.MinInt64, -1, 0, 1, math.MaxInt64, 1 << 40}, 1, 2, 3)
	roundTrip(t, []array.F16{array.NewF16(1.5), array.NewF16(-0.25), array.NewF16(65504), 0x7c00, 0x0001, 0x8000}, 2, 3)
	roundTrip(t, []array.BF16{array.NewBF16(1.5), array.NewBF16(-3), array.NewBF16(1e30), 0x7f80, 0x0001, 0x8000}, 3, 2)
	roundTrip(t, []float32{0.1, -2.5, nan32, float32(math.Inf(1)), math.SmallestNonzeroFloat32, math.MaxFloat32})
	roundTrip(t, []float64{math.Pi, -math.E, nan64, math.Inf(-1), math.SmallestNonzeroFloat64, math.MaxFloat64}, 2, 1, 3)
	roundTrip(t, []complex64{1 + 2i, -3.5 - 0.25i, complex(nan32, 1), 0, 1i, -1}, 3, 2)
}

func TestScalarEveryDType(t *testing.T) {
	check := func(a *array.Array, dt array.DType, item float64) {
		t.Helper()
		if a.Ndim() != 0 || len(a.Shape()) != 0 || a.Size() != 1 || a.DType() != dt {
			t.Errorf("Scalar %v: Ndim %d Shape %v Size %d DType %v", dt, a.Ndim(), a.Shape(), a.Size(), a.DType())
		}
		if got := a.Item(); got != item {
			t.Errorf("Scalar %v: Item() = %v, want %v", dt, got, item)
		}
	}
	check(array.Scalar(true), array.Bool, 1)
	check(array.Scalar(false), array.Bool, 0)
	check(array.Scalar(uint8(200)), array.Uint8, 200)
	check(array.Scalar(int32(-7)), array.Int32, -7)
	check(array.Scalar(int64(1)<<40), array.Int64, 1<<40)
	check(array.Scalar(array.NewF16(1.5)), array.Float16, 1.5)
	check(array.Scalar(array.NewBF16(-2.5)), array.BFloat16, -2.5)
	check(array.Scalar(float32(0.25)), array.Float32, 0.25)
	check(array.Scalar(math.Pi), array.Float64, math.Pi)
	check(array.Scalar(complex64(3-4i)), array.Complex64, 3)

	got, err := array.ToSlice[int32](array.Scalar(int32(9)))
	if err != nil || !slices.Equal(got, []int32{9}) {
		t.Errorf("ToSlice of a 0-d array = %v, %v; want [9]", got, err)
	}
}

func TestItemRounding(t *testing.T) {
	// Item reports the stored value exactly: the float16 nearest 0.1.
	if got, want := array.Scalar(array.NewF16(0.1)).Item(), 0.0999755859375; got != want {
		t.Errorf("Item of float16 0.1 = %v, want %v", got, want)
	}
	if got := array.FromSlice([]float64{math.NaN()}).Item(); !math.IsNaN(got) {
		t.Errorf("Item of [NaN] = %v", got)
	}
	// a one-element array of any rank
	if got := array.FromSlice([]int64{-3}, 1, 1, 1).Item(); got != -3 {
		t.Errorf("Item of [[[−3]]] = %v", got)
	}
}

// wantError checks that err is a *array.Error from op whose message
// contains each of parts.
func wantError(t *testing.T, err error, op string, parts ...string) {
	t.Helper()
	var e *array.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v (%T), want *array.Error from %s", err, err, op)
	}
	if e.Op != op {
		t.Errorf("error %q names %q, want %q", e, e.Op, op)
	}
	if !strings.HasPrefix(e.Error(), op+": ") {
		t.Errorf("error text %q does not start with %q", e.Error(), op+": ")
	}
	for _, p := range parts {
		if !strings.Contains(e.Msg, p) {
			t.Errorf("error %q does not mention %q", e, p)
		}
	}
}

func TestFromSliceBadShape(t *testing.T) {
	for _, c := range []struct {
		name  string
		f     func()
		parts []string
	}{
		{"too few elements", func() { array.FromSlice([]float32{1, 2, 3}, 2, 2) }, []string{"3 elements", "[2 2]", "4 elements"}},
		{"too many elements", func() { array.FromSlice([]int32{1, 2, 3, 4, 5}, 2, 2) }, []string{"5 elements", "[2 2]"}},
		{"0-d from two", func() { array.FromSlice([]bool{true, false}, []int{}...) }, []string{"2 elements", "[]"}},
		{"negative dimension", func() { array.FromSlice([]float64{}, -1, 0) }, []string{"negative dimension", "[-1 0]"}},
		{"negative dimension that multiplies out", func() { array.FromSlice([]uint8{1, 2}, -1, -2) }, []string{"negative dimension", "[-1 -2]"}},
		{"overflowing shape", func() { array.FromSlice([]float32{1}, math.MaxInt/2, 4) }, []string{"too many elements"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, array.Try(c.f), "array.FromSlice", c.parts...)
		})
	}
}

func TestFromSliceCopies(t *testing.T) {
	data := []float32{1, 2, 3}
	a := array.FromSlice(data)
	data[0] = 100
	got, _ := array.ToSlice[float32](a)
	if got[0] != 1 {
		t.Errorf("FromSlice shares its input: element 0 is %v after the slice changed", got[0])
	}
	got[1] = 200
	again, _ := array.ToSlice[float32](a)
	if again[1] != 2 {
		t.Errorf("ToSlice shares the array's memory: element 1 is %v", again[1])
	}
}

func TestToSliceWrongType(t *testing.T) {
	a := array.FromSlice([]float32{1, 2})
	got, err := array.ToSlice[float64](a)
	if got != nil {
		t.Errorf("ToSlice[float64] of float32 returned %v", got)
	}
	wantError(t, err, "array.ToSlice", "float32", "float64")
	_, err = array.ToSlice[array.BF16](array.FromSlice([]array.F16{1}))
	wantError(t, err, "array.ToSlice", "float16", "bfloat16")
	_, err = array.ToSlice[int32](array.FromSlice([]int64{1}))
	wantError(t, err, "array.ToSlice", "int64", "int32")
}

func TestItemBadSize(t *testing.T) {
	err := array.Try(func() { array.FromSlice([]float32{1, 2, 3}).Item() })
	wantError(t, err, "array.Item", "[3]", "3 elements")
	err = array.Try(func() { array.FromSlice([]int32{}, 0, 4).Item() })
	wantError(t, err, "array.Item", "[0 4]", "0 elements")
}

func TestEmptyArrays(t *testing.T) {
	for _, shape := range [][]int{{0}, {0, 3}, {2, 0, 4}, {3, 0}} {
		a := array.FromSlice([]float32{}, shape...)
		if a.Size() != 0 || a.NBytes() != 0 || !slices.Equal(a.Shape(), shape) {
			t.Errorf("%v: Size %d NBytes %d Shape %v", shape, a.Size(), a.NBytes(), a.Shape())
		}
		got, err := array.ToSlice[float32](a)
		if err != nil || got == nil || len(got) != 0 {
			t.Errorf("%v: ToSlice = %#v, %v; want an empty, non-nil slice", shape, got, err)
		}
		if err := a.Eval(); err != nil {
			t.Errorf("%v: Eval: %v", shape, err)
		}
	}
	a := array.FromSlice([]int64(nil))
	if !slices.Equal(a.Shape(), []int{0}) || a.Size() != 0 {
		t.Errorf("FromSlice(nil): Shape %v Size %d", a.Shape(), a.Size())
	}
}

func TestShapeIsACopy(t *testing.T) {
	shape := []int{2, 3}
	a := array.FromSlice(make([]int32, 6), shape...)
	shape[0] = 9
	s := a.Shape()
	s[1] = 9
	if !slices.Equal(a.Shape(), []int{2, 3}) {
		t.Errorf("shape changed through a caller's slice: %v", a.Shape())
	}
}

func TestDim(t *testing.T) {
	a := array.FromSlice(make([]uint8, 24), 2, 3, 4)
	for _, c := range []struct{ axis, want int }{{0, 2}, {1, 3}, {2, 4}, {-1, 4}, {-3, 2}} {
		if got := a.Dim(c.axis); got != c.want {
			t.Errorf("Dim(%d) = %d, want %d", c.axis, got, c.want)
		}
	}
	for _, axis := range []int{3, -4} {
		wantError(t, array.Try(func() { a.Dim(axis) }), "array.Dim", "[2 3 4]")
	}
}

func TestStridedViewToSlice(t *testing.T) {
	// a 3x2 transposed view of [[0 1 2] [3 4 5]], and a reversed,
	// stepped view, read through FromStorage.
	base := array.FromSlice([]int32{0, 1, 2, 3, 4, 5}, 2, 3)
	tr := array.FromStorage(base.Stream(), []int{3, 2}, array.Int32, base.Storage(), []int{1, 3}, 0)
	if tr.RowMajor() {
		t.Error("transposed view reports row-major")
	}
	if got, _ := array.ToSlice[int32](tr); !slices.Equal(got, []int32{0, 3, 1, 4, 2, 5}) {
		t.Errorf("transposed view: %v", got)
	}
	rev := array.FromStorage(base.Stream(), []int{3}, array.Int32, base.Storage(), []int{-2}, 5)
	if got, _ := array.ToSlice[int32](rev); !slices.Equal(got, []int32{5, 3, 1}) {
		t.Errorf("reversed view: %v", got)
	}
	bc := array.FromStorage(base.Stream(), []int{2, 3}, array.Int32, base.Storage(), []int{0, 1}, 3)
	if got, _ := array.ToSlice[int32](bc); !slices.Equal(got, []int32{3, 4, 5, 3, 4, 5}) {
		t.Errorf("broadcast view: %v", got)
	}
	if got := array.FromStorage(base.Stream(), nil, array.Int32, base.Storage(), nil, 4).Item(); got != 4 {
		t.Errorf("0-d view at offset 4: Item %v", got)
	}
}

func TestRowMajorStrides(t *testing.T) {
	for _, c := range []struct{ shape, want []int }{
		{nil, []int{}},
		{[]int{5}, []int{1}},
		{[]int{2, 3, 4}, []int{12, 4, 1}},
		{[]int{2, 0, 3}, []int{3, 3, 1}},
	} {
		if got := strided.RowMajor(c.shape); !slices.Equal(got, c.want) {
			t.Errorf("RowMajorStrides(%v) = %v, want %v", c.shape, got, c.want)
		}
	}
}

func TestForEachOffset(t *testing.T) {
	var got []int
	strided.ForEachOffset([]int{2, 3}, []int{1, 2}, 10, func(off int) { got = append(got, off) })
	if want := []int{10, 12, 14, 11, 13, 15}; !slices.Equal(got, want) {
		t.Errorf("ForEachOffset = %v, want %v", got, want)
	}
	got = nil
	strided.ForEachOffset(nil, nil, 7, func(off int) { got = append(got, off) })
	if !slices.Equal(got, []int{7}) {
		t.Errorf("0-d ForEachOffset = %v", got)
	}
	strided.ForEachOffset([]int{3, 0}, []int{1, 1}, 0, func(int) { t.Error("called for an empty shape") })
}

func TestErrorAndTry(t *testing.T) {
	e := array.Errorf("ops.Add", "shapes %v and %v do not broadcast", []int{2, 3}, []int{4})
	if got, want := e.Error(), "ops.Add: shapes [2 3] and [4] do not broadcast"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if err := array.Try(func() {}); err != nil {
		t.Errorf("Try of a function that returns: %v", err)
	}
	err := array.Try(func() { array.Panicf("ops.Sum", "axis %d out of range", 5) })
	wantError(t, err, "ops.Sum", "axis 5 out of range")

	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("Try swallowed or changed a non-*Error panic: %v", r)
		}
	}()
	_ = array.Try(func() { panic("boom") })
	t.Error("Try returned after a non-*Error panic")
}

// TestSetRowMajorData checks SetRowMajorData's strides against
// strided.RowMajor, up to and past the four dimensions whose strides an
// array keeps inline, and that SetData keeps its own copy of strides.
func TestSetRowMajorData(t *testing.T) {
	for _, shape := range [][]int{nil, {5}, {2, 3, 4}, {2, 0, 3}, {2, 1, 3, 2}, {2, 1, 3, 1, 2, 2}} {
		a := array.New(array.CurrentStream(), shape, array.Int32, nil)
		n := 1
		for _, d := range shape {
			n *= d
		}
		a.SetRowMajorData(array.AllocCPU(4 * n))
		want := strided.RowMajor(shape)
		if got := a.Strides(); !slices.Equal(got, want) || !a.RowMajor() || a.Offset() != 0 {
			t.Errorf("shape %v: strides %v, row-major %v, offset %d; want %v, true, 0", shape, got, a.RowMajor(), a.Offset(), want)
		}
		b := array.New(array.CurrentStream(), shape, array.Int32, nil)
		st := slices.Clone(want)
		b.SetData(array.AllocCPU(4*n), st, 0)
		for i := range st {
			st[i] = -1
		}
		if got := b.Strides(); !slices.Equal(got, want) {
			t.Errorf("shape %v: SetData's strides changed with the caller's slice: %v", shape, got)
		}
	}
}

// TestSharedShapeStaysPrivate checks an array that shares its shape
// slice with its input (New does so when they are equal): neither
// Shape's copy nor the caller's slice reaches it.
func TestSharedShapeStaysPrivate(t *testing.T) {
	x := array.FromSlice(make([]float32, 6), 2, 3)
	shape := []int{2, 3}
	y := array.New(array.CurrentStream(), shape, array.Float32, nil, x)
	shape[0] = 7
	y.Shape()[1] = 7
	x.Shape()[0] = 7
	if !slices.Equal(y.RawShape(), []int{2, 3}) || !slices.Equal(x.RawShape(), []int{2, 3}) {
		t.Errorf("shapes changed: x %v, y %v", x.RawShape(), y.RawShape())
	}
	if z := array.New(array.CurrentStream(), []int{3, 2}, array.Float32, nil, x); !slices.Equal(z.Shape(), []int{3, 2}) {
		t.Errorf("an array of another shape than its input's has shape %v", z.Shape())
	}
}
