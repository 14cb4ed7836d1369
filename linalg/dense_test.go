package linalg_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/linalg"
	"github.com/fathom-go/fathom/ops"
)

// TestFromDense checks each path of FromDense: a *mat.Dense, a view of
// one with a wider stride, a transposed Dense, and a matrix read through
// At (a symmetric one).
func TestFromDense(t *testing.T) {
	d := mat.NewDense(3, 4, []float64{
		1, 2, 3, 4,
		5, 6, 7, 8,
		9, 10, 11, 12,
	})
	sym := mat.NewSymDense(2, []float64{1, 2, 2, 3})
	cases := []struct {
		name  string
		m     mat.Matrix
		shape string
		want  []float64
	}{
		{"dense", d, "[3 4]", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{"strided view", d.Slice(1, 3, 1, 3), "[2 2]", []float64{6, 7, 10, 11}},
		{"transpose", d.T(), "[4 3]", []float64{1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12}},
		{"transposed view", d.Slice(0, 2, 2, 4).T(), "[2 2]", []float64{3, 7, 4, 8}},
		{"symmetric", sym, "[2 2]", []float64{1, 2, 2, 3}},
		{"empty", &mat.Dense{}, "[0 0]", []float64{}},
	}
	for _, c := range cases {
		a := linalg.FromDense(c.m)
		got, err := array.ToSlice[float64](a)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(a.Shape()) != c.shape || fmt.Sprint(got) != fmt.Sprint(c.want) || a.DType() != array.Float64 {
			t.Errorf("%s: %v %v %v, want %s %v float64", c.name, a.Shape(), got, a.DType(), c.shape, c.want)
		}
	}
	// The array is a copy: changing the matrix afterwards does not show.
	a := linalg.FromDense(d)
	d.Set(0, 0, 100)
	if v := ops.Slice(a, ops.R(0, 1), ops.R(0, 1)).Item(); v != 1 {
		t.Errorf("FromDense shares the matrix's storage: a[0,0] = %v after Set", v)
	}
}

// atVec is a mat.Vector with no raw storage, read through AtVec.
type atVec []float64

func (v atVec) Dims() (int, int)    { return len(v), 1 }
func (v atVec) At(i, _ int) float64 { return v[i] }
func (v atVec) T() mat.Matrix       { return mat.Transpose{Matrix: v} }
func (v atVec) Len() int            { return len(v) }
func (v atVec) AtVec(i int) float64 { return v[i] }

// TestFromVec checks a VecDense, a strided column view and a vector read
// through AtVec.
func TestFromVec(t *testing.T) {
	d := mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, 6})
	cases := []struct {
		name string
		v    mat.Vector
		want string
	}{
		{"vecdense", mat.NewVecDense(3, []float64{7, 8, 9}), "[7 8 9]"},
		{"column view", d.ColView(1), "[2 4 6]"},
		{"read through AtVec", atVec{2, 3}, "[2 3]"},
	}
	for _, c := range cases {
		a := linalg.FromVec(c.v)
		got, err := array.ToSlice[float64](a)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != c.want || a.Ndim() != 1 {
			t.Errorf("%s: %v of shape %v, want %s", c.name, got, a.Shape(), c.want)
		}
	}
}

// TestToDense checks the conversions from every real dtype and from
// views, the round trip, and the errors.
func TestToDense(t *testing.T) {
	x := array.FromSlice([]float32{1.5, -2, 3, 4.25, 5, 6}, 2, 3)
	for _, a := range []*array.Array{
		x,
		ops.AsType(x, array.Float64),
		ops.AsType(x, array.Float16),
		ops.Transpose(ops.Transpose(ops.AsType(x, array.Float64))),
	} {
		d, err := linalg.ToDense(a)
		if err != nil {
			t.Fatal(err)
		}
		want := mat.NewDense(2, 3, []float64{1.5, -2, 3, 4.25, 5, 6})
		if !mat.Equal(d, want) {
			t.Errorf("ToDense of %v: %v, want %v", a.DType(), mat.Formatted(d), mat.Formatted(want))
		}
	}
	tr, err := linalg.ToDense(ops.Transpose(ops.AsType(x, array.Float64)))
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(tr, mat.NewDense(3, 2, []float64{1.5, 4.25, -2, 5, 3, 6})) {
		t.Errorf("ToDense of a transposed view: %v", mat.Formatted(tr))
	}
	ints, err := linalg.ToDense(array.FromSlice([]int32{1, 2, 3, 4}, 2, 2))
	if err != nil || !mat.Equal(ints, mat.NewDense(2, 2, []float64{1, 2, 3, 4})) {
		t.Errorf("ToDense of int32: %v, %v", ints, err)
	}
	back := linalg.FromDense(tr)
	if eq := ops.ArrayEqual(back, ops.Transpose(ops.AsType(x, array.Float64)), false).Item(); eq != 1 {
		t.Errorf("FromDense(ToDense(a)) is not a")
	}

	v, err := linalg.ToVecDense(array.FromSlice([]float64{1, 2, 3}, 3))
	if err != nil || !mat.Equal(v, mat.NewVecDense(3, []float64{1, 2, 3})) {
		t.Errorf("ToVecDense: %v, %v", v, err)
	}

	bad := []struct {
		name string
		f    func() error
		op   string
		msg  string
	}{
		{"1-D", func() error { _, err := linalg.ToDense(array.FromSlice([]float64{1, 2}, 2)); return err }, "linalg.ToDense", "not 2"},
		{"3-D", func() error { _, err := linalg.ToDense(ops.Zeros([]int{1, 2, 2}, array.Float64)); return err }, "linalg.ToDense", "not 2"},
		{"empty", func() error { _, err := linalg.ToDense(ops.Zeros([]int{0, 2}, array.Float64)); return err }, "linalg.ToDense", "is empty"},
		{"complex", func() error { _, err := linalg.ToDense(ops.Zeros([]int{2, 2}, array.Complex64)); return err }, "linalg.ToDense", "real"},
		{"nil", func() error { _, err := linalg.ToDense(nil); return err }, "linalg.ToDense", "nil array"},
		{"vector of a matrix", func() error { _, err := linalg.ToVecDense(ops.Zeros([]int{2, 2}, array.Float64)); return err }, "linalg.ToVecDense", "not 1"},
		{"nil matrix", func() error { return array.Try(func() { linalg.FromDense(nil) }) }, "linalg.FromDense", "nil matrix"},
		{"nil vector", func() error { return array.Try(func() { linalg.FromVec(nil) }) }, "linalg.FromVec", "nil vector"},
	}
	for _, c := range bad {
		var e *array.Error
		if err := c.f(); !errors.As(err, &e) || e.Op != c.op || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%s: error %v, want %s: ...%s...", c.name, err, c.op, c.msg)
		}
	}
}
