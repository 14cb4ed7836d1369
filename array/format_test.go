package array_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// formatCase is one case of testdata/format.json (see gen_format.py).
type formatCase struct {
	Name   string    `json:"name"`
	DType  string    `json:"dtype"`
	Shape  []int     `json:"shape"`
	Data   []float64 `json:"data"`
	Format string    `json:"format"`
	Want   string    `json:"want"`
}

func (c formatCase) array(t *testing.T) *array.Array {
	t.Helper()
	switch c.DType {
	case "float64":
		return array.FromSlice(c.Data, c.Shape...)
	case "float32":
		return array.FromSlice(convert[float32](c.Data), c.Shape...)
	case "int32":
		return array.FromSlice(convert[int32](c.Data), c.Shape...)
	case "int64":
		return array.FromSlice(convert[int64](c.Data), c.Shape...)
	case "uint8":
		return array.FromSlice(convert[uint8](c.Data), c.Shape...)
	}
	t.Fatalf("%s: dtype %s", c.Name, c.DType)
	return nil
}

func convert[T float32 | int32 | int64 | uint8](v []float64) []T {
	out := make([]T, len(v))
	for i, x := range v {
		out[i] = T(x)
	}
	return out
}

// TestFormatMatchesNumpyStr checks the element verbs' layout against
// numpy's str of the same elements (array2string with the same printf
// format and padding).
func TestFormatMatchesNumpyStr(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "format.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Cases []formatCase }
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) < 18 {
		t.Fatalf("format.json has %d cases", len(f.Cases))
	}
	for _, c := range f.Cases {
		var a *array.Array
		if len(c.Shape) == 0 {
			// FromSlice without a shape is 1-D
			a = scalarOf(t, c)
		} else {
			a = c.array(t)
		}
		if got := fmt.Sprintf(c.Format, a); got != c.Want {
			t.Errorf("%s: Sprintf(%q) gives\n%s\nnumpy gives\n%s", c.Name, c.Format, got, c.Want)
		}
	}
}

func scalarOf(t *testing.T, c formatCase) *array.Array {
	t.Helper()
	if c.DType != "float64" || len(c.Data) != 1 {
		t.Fatalf("%s: a 0-d case must be one float64", c.Name)
	}
	return array.Scalar(c.Data[0])
}

func TestFormatVerbs(t *testing.T) {
	m := array.FromSlice([]float32{1, 2.5, -3, 4, 1e-3, 6}, 2, 3)
	i := array.FromSlice([]int32{1, -20, 300})
	c := array.FromSlice([]complex64{1 + 2i, -3.5 - 1i})
	h := array.FromSlice([]array.F16{array.NewF16(0.1), array.NewF16(2)})
	b := array.FromSlice([]bool{true, false})
	for _, tc := range []struct {
		format string
		a      *array.Array
		want   string
	}{
		{"%v", i, "array([  1, -20, 300], dtype=int32)"},
		{"%s", i, "array([  1, -20, 300], dtype=int32)"},
		{"%+v", i, "array([  1, -20, 300], shape=(3,), dtype=int32)"},
		{"%+v", m, "array([[ 1.0e+00,  2.5e+00, -3.0e+00],\n       [ 4.0e+00,  1.0e-03,  6.0e+00]], shape=(2, 3), dtype=float32)"},
		{"%+v", array.Scalar[int32](7), "array(7, shape=(), dtype=int32)"},
		{"%+v", array.FromSlice([]float64{}, 2, 0), "array([], shape=(2, 0), dtype=float64)"},
		{"%#v", m, "array.FromSlice([]float32{1, 2.5, -3, 4, 0.001, 6}, 2, 3)"},
		{"%#v", i, "array.FromSlice([]int32{1, -20, 300})"},
		{"%#v", c, "array.FromSlice([]complex64{complex(1, 2), complex(-3.5, -1)})"},
		{"%#v", h, "array.FromSlice([]array.F16{0x2e66, 0x4000})"},
		{"%#v", b, "array.FromSlice([]bool{true, false})"},
		{"%#v", array.Scalar(3.25), "array.Scalar[float64](3.25)"},
		{"%#v", array.FromSlice([]float64{math.NaN(), math.Inf(-1), math.Copysign(0, -1)}), "array.FromSlice([]float64{math.NaN(), math.Inf(-1), math.Copysign(0, -1)})"},
		{"%#v", array.FromSlice([]float32{float32(math.Inf(1))}), "array.FromSlice([]float32{float32(math.Inf(1))})"},
		{"%#v", array.FromSlice([]uint8{}, 0, 3), "array.FromSlice([]uint8{}, 0, 3)"},
		{"%g", m, "[[    1   2.5    -3]\n [    4 0.001     6]]"},
		// float16 0.1 is 0.0999755859375: %g gives float16's shortest digits
		{"%g", h, "[0.1   2]"},
		{"%.6f", h, "[0.099976 2.000000]"},
		{"%.2f", c, "[ 1.00+2.00j -3.50-1.00j]"},
		{"%12.1f|", c, "[    1.0+2.0j    -3.5-1.0j]|"},
		{"%g", c, "[   1+2j -3.5-1j]"},
		{"%t", b, "[ true false]"},
		{"%-6t|", b, "[true   false ]|"},
		{"%.1f", i, "[  1.0 -20.0 300.0]"},
		{"%04d", i, "[0001 -020 0300]"},
		{"%b", array.FromSlice([]uint8{5, 255}), "[     101 11111111]"},
		{"%d", m, "%!d(*array.Array=float32 [2 3])"},
		{"%f", b, "%!f(*array.Array=bool [2])"},
		{"%t", i, "%!t(*array.Array=int32 [3])"},
		{"%q", m, "%!q(*array.Array=float32 [2 3])"},
		{"%v %.2f", nil, "<nil> <nil>"},
	} {
		var got string
		if tc.a == nil {
			var n *array.Array
			got = fmt.Sprintf(tc.format, n, n)
		} else {
			got = fmt.Sprintf(tc.format, tc.a)
		}
		if got != tc.want {
			t.Errorf("Sprintf(%q, %v) is\n%s\nwant\n%s", tc.format, tc.a, got, tc.want)
		}
	}
}

// TestFormatGoSyntaxSummarisesNothing: %#v rebuilds the array, so it
// writes every element even where the other verbs summarise.
func TestFormatGoSyntaxSummarisesNothing(t *testing.T) {
	big := array.FromSlice(make([]int32, 1001))
	got := fmt.Sprintf("%#v", big)
	if strings.Contains(got, "...") || strings.Count(got, "0") != 1001 {
		t.Errorf("%%#v of 1001 zeros: %d zeros, ... %v", strings.Count(got, "0"), strings.Contains(got, "..."))
	}
	if s := fmt.Sprintf("%.0f", big); !strings.Contains(s, "...") {
		t.Errorf("%%.0f of 1001 elements is not summarised: %s", s)
	}
}

// TestFormatOfUnevaluableArray: printing cannot return an error, so an
// array whose evaluation fails prints the error under every verb, and
// ItemOf returns the same error.
func TestFormatOfUnevaluableArray(t *testing.T) {
	cause := errors.New("device lost")
	a := array.New(array.CurrentStream(), []int{}, array.Float32, &failPrim{err: cause})
	want := "array(<error: device lost>)"
	for _, f := range []string{"%v", "%s", "%+v", "%#v", "%.2f", "%g"} {
		if got := fmt.Sprintf(f, a); !strings.HasPrefix(got, "array(<error: ") || !strings.Contains(got, "device lost") {
			t.Errorf("Sprintf(%q) of a failing array: %q, want %q", f, got, want)
		}
	}
	if _, err := array.ItemOf[float32](a); !errors.Is(err, cause) {
		t.Errorf("ItemOf of a failing array: %v, want %v", err, cause)
	}
}

func TestItemOf(t *testing.T) {
	if v, err := array.ItemOf[float32](array.Scalar[float32](2.5)); v != 2.5 || err != nil {
		t.Errorf("float32: %v, %v", v, err)
	}
	if v, err := array.ItemOf[int64](array.FromSlice([]int64{-1 << 60}, 1, 1)); v != -1<<60 || err != nil {
		t.Errorf("int64 beyond float64's integers: %v, %v", v, err)
	}
	if v, err := array.ItemOf[complex64](array.FromSlice([]complex64{1 - 2i})); v != 1-2i || err != nil {
		t.Errorf("complex64: %v, %v", v, err)
	}
	if v, err := array.ItemOf[bool](array.Scalar(true)); !v || err != nil {
		t.Errorf("bool: %v, %v", v, err)
	}
	for _, tc := range []struct {
		name  string
		err   error
		parts []string
	}{
		{"dtype", second(array.ItemOf[float64](array.Scalar[float32](1))), []string{"float32", "not float64"}},
		{"size", second(array.ItemOf[float32](array.FromSlice([]float32{1, 2}, 2, 1))), []string{"[2 1]", "2 elements"}},
		{"empty", second(array.ItemOf[float32](array.FromSlice([]float32{}))), []string{"[0]", "0 elements"}},
		{"nil", second(array.ItemOf[float32](nil)), []string{"nil"}},
	} {
		var e *array.Error
		if !errors.As(tc.err, &e) || e.Op != "array.ItemOf" {
			t.Errorf("%s: %v, want an array.ItemOf *array.Error", tc.name, tc.err)
			continue
		}
		for _, p := range tc.parts {
			if !strings.Contains(e.Msg, p) {
				t.Errorf("%s: %q does not mention %q", tc.name, e.Msg, p)
			}
		}
	}
}

func second[T any](_ T, err error) error { return err }

func ExampleItemOf() {
	loss := array.Scalar[float32](0.25)
	v, err := array.ItemOf[float32](loss)
	fmt.Println(v, err)
	_, err = array.ItemOf[float64](loss)
	fmt.Println(err)
	// Output:
	// 0.25 <nil>
	// array.ItemOf: array has dtype float32, not float64
}

func ExampleArray_Format() {
	a := array.FromSlice([]float32{1, 2.5, -3, 4, 0.001, 6}, 2, 3)
	fmt.Printf("%.2f\n", a)
	fmt.Printf("%8.1e\n", a)
	fmt.Printf("%+v\n", array.FromSlice([]int32{1, 2, 3}))
	fmt.Printf("%#v\n", a)
	// Output:
	// [[ 1.00  2.50 -3.00]
	//  [ 4.00  0.00  6.00]]
	// [[ 1.0e+00  2.5e+00 -3.0e+00]
	//  [ 4.0e+00  1.0e-03  6.0e+00]]
	// array([1, 2, 3], shape=(3,), dtype=int32)
	// array.FromSlice([]float32{1, 2.5, -3, 4, 0.001, 6}, 2, 3)
}
