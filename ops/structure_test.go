package ops_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/refcase"
	"github.com/fathom-go/fathom/ops"
)

// TestStructureReference checks the matrix-structure ops against numpy
// (gen_structure.py) on every layout of their inputs.
func TestStructureReference(t *testing.T) {
	want := map[string]bool{"Diagonal": false, "Diag": false, "Trace": false, "Tri": false, "Tril": false,
		"Triu": false, "Kron": false, "Inner": false, "VecDot": false, "AddMM": false}
	for _, c := range loadCases(t, "structure.json") {
		if _, ok := want[c.Op]; !ok {
			t.Fatalf("%s: unknown op %q", c.Name, c.Op)
		}
		want[c.Op] = true
		ints := func(name string) int {
			var v int
			if !c.Param(t, name, &v) {
				t.Fatalf("%s: no param %s", c.Name, name)
			}
			return v
		}
		floats := func(name string) float64 {
			var v float64
			if !c.Param(t, name, &v) {
				t.Fatalf("%s: no param %s", c.Name, name)
			}
			return v
		}
		run := func(in []*array.Array) *array.Array {
			switch c.Op {
			case "Diagonal":
				return ops.Diagonal(in[0], ints("offset"), ints("axis1"), ints("axis2"))
			case "Diag":
				return ops.Diag(in[0], ints("k"))
			case "Trace":
				return ops.Trace(in[0], ints("offset"), ints("axis1"), ints("axis2"))
			case "Tri":
				var dt string
				c.Param(t, "dtype", &dt)
				return ops.Tri(ints("n"), ints("m"), ints("k"), refcase.ParseDType(t, dt))
			case "Tril":
				return ops.Tril(in[0], ints("k"))
			case "Triu":
				return ops.Triu(in[0], ints("k"))
			case "Kron":
				return ops.Kron(in[0], in[1])
			case "Inner":
				return ops.Inner(in[0], in[1])
			case "VecDot":
				return ops.VecDot(in[0], in[1], ints("axis"))
			default:
				return ops.AddMM(in[0], in[1], in[2], floats("alpha"), floats("beta"))
			}
		}
		base := make([]*array.Array, len(c.Inputs))
		for i, r := range c.Inputs {
			base[i] = r.Build(t)
		}
		for _, l := range refLayouts {
			in := make([]*array.Array, len(base))
			for i, x := range base {
				in[i] = l.of(x)
			}
			checkArray(t, c.Name+" "+l.name, run(in), c.Expected[0])
		}
	}
	for op, seen := range want {
		if !seen {
			t.Errorf("no reference case for %s", op)
		}
	}
}

// TestDiagonalIsAView checks that Diagonal (and so Einsum's repeated
// labels) shares its input's memory: no kernel runs for it on any device.
func TestDiagonalIsAView(t *testing.T) {
	a := ops.Arange(0, 24, 1, array.Float32)
	m := ops.Reshape(a, 2, 3, 4)
	d := ops.Diagonal(m, 1, 1, 2)
	if err := d.Eval(); err != nil {
		t.Fatal(err)
	}
	if d.Storage() != m.Storage() {
		t.Error("Diagonal copied its input")
	}
	got, _ := array.ToSlice[float32](d)
	if want := []float32{1, 6, 11, 13, 18, 23}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Diagonal(offset 1, axes 1 2) = %v, want %v", got, want)
	}
}

// TestStructureBadInput checks that bad arguments are an *array.Error
// naming the op and the shapes, raised at the call.
func TestStructureBadInput(t *testing.T) {
	m := func(s ...int) *array.Array { return ops.Zeros(s, array.Float32) }
	i32 := ops.Zeros([]int{2, 2}, array.Int32)
	for _, c := range []struct {
		op, want string
		f        func()
	}{
		{"ops.Diagonal", "[3]: needs at least 2 dimensions", func() { ops.Diagonal(m(3), 0, 0, 1) }},
		{"ops.Diagonal", "axis1 0 and axis2 -2 are the same axis of shape [2 3]", func() { ops.Diagonal(m(2, 3), 0, 0, -2) }},
		{"ops.Diagonal", "axis 2 out of range", func() { ops.Diagonal(m(2, 3), 0, 0, 2) }},
		{"ops.Trace", "[]: needs at least 2 dimensions", func() { ops.Trace(m(), 0, 0, 1) }},
		{"ops.Trace", "axis -3 out of range", func() { ops.Trace(m(2, 3), 0, -3, 1) }},
		{"ops.Diag", "[2 2 2]: the input must be 1-D or 2-D", func() { ops.Diag(m(2, 2, 2), 0) }},
		{"ops.Diag", "[]: the input must be 1-D or 2-D", func() { ops.Diag(m(), 0) }},
		{"ops.Diag", "overflows", func() { ops.Diag(m(3), math.MaxInt-1) }},
		{"ops.Diag", "overflows", func() { ops.Diag(m(3), math.MinInt) }},
		{"ops.Tri", "negative", func() { ops.Tri(-1, 2, 0, array.Float32) }},
		{"ops.Tri", "invalid dtype", func() { ops.Tri(2, 2, 0, array.DType(200)) }},
		{"ops.Tril", "[]: needs at least 1 dimension", func() { ops.Tril(m(), 0) }},
		{"ops.Triu", "[]: needs at least 1 dimension", func() { ops.Triu(m(), 0) }},
		{"ops.Kron", "overflows", func() { ops.Kron(ops.BroadcastTo(m(1), 1<<40), ops.BroadcastTo(m(1), 1<<40)) }},
		{"ops.Inner", "shapes [2 3] and [2 4]: last dimensions 3 and 4 differ", func() { ops.Inner(m(2, 3), m(2, 4)) }},
		{"ops.VecDot", "[2 3] and [4 3] do not broadcast", func() { ops.VecDot(m(2, 3), m(4, 3), -1) }},
		{"ops.VecDot", "axis 2 out of range", func() { ops.VecDot(m(2, 3), m(2, 3), 2) }},
		{"ops.VecDot", "shapes [] and []: needs at least 1 dimension", func() { ops.VecDot(m(), m(), 0) }},
		{"ops.AddMM", "shape [3 4] of c does not broadcast to the product's shape [2 4]", func() { ops.AddMM(m(3, 4), m(2, 3), m(3, 4), 1, 1) }},
		{"ops.AddMM", "shape [2 5] of c does not broadcast", func() { ops.AddMM(m(2, 5), m(2, 3), m(3, 4), 1, 1) }},
		{"ops.AddMM", "promote to int32, not a float or complex dtype", func() { ops.AddMM(i32, i32, i32, 1, 1) }},
		{"ops.MatMul", "inner dimensions 3 and 4 differ", func() { ops.AddMM(m(2, 4), m(2, 3), m(4, 4), 1, 1) }},
	} {
		err := array.Try(c.f)
		var ae *array.Error
		if !errors.As(err, &ae) || ae.Op != c.op || !strings.Contains(ae.Msg, c.want) {
			t.Errorf("%v, want an %s error containing %q", err, c.op, c.want)
		}
	}
}

// TestStructureDTypes checks the result dtypes: the structure ops keep
// their input's, Trace has Sum's, and the products promote.
func TestStructureDTypes(t *testing.T) {
	u8 := ops.Zeros([]int{3, 3}, array.Uint8)
	f32 := ops.Zeros([]int{3, 3}, array.Float32)
	i32 := ops.Zeros([]int{3, 3}, array.Int32)
	for _, c := range []struct {
		got  *array.Array
		want array.DType
	}{
		{ops.Diagonal(u8, 0, 0, 1), array.Uint8},
		{ops.Trace(u8, 0, 0, 1), array.Uint32},
		{ops.Tril(u8, 0), array.Uint8},
		{ops.Triu(ops.Zeros([]int{2, 2}, array.Bool), 0), array.Bool},
		{ops.Kron(i32, f32), array.Float32},
		{ops.Inner(i32, i32), array.Int32},
		{ops.VecDot(i32, f32, 0), array.Float32},
		{ops.AddMM(f32, i32, f32, 1, 1), array.Float32},
	} {
		if c.got.DType() != c.want {
			t.Errorf("%s: dtype %v, want %v", c.got.Primitive().Name(), c.got.DType(), c.want)
		}
	}
}

func ExampleDiagonal() {
	a := ops.Reshape(ops.Arange(0, 6, 1, array.Float32), 2, 3)
	fmt.Println(ops.Diagonal(a, 1, 0, 1))
	fmt.Println(ops.Trace(a, 0, 0, 1))
	// Output:
	// array([1., 5.], dtype=float32)
	// array(4., dtype=float32)
}

func ExampleTril() {
	fmt.Println(ops.Tril(ops.Ones([]int{3, 3}, array.Int32), -1))
	// Output:
	// array([[0, 0, 0],
	//        [1, 0, 0],
	//        [1, 1, 0]], dtype=int32)
}

func ExampleKron() {
	a := array.FromSlice([]int32{1, 2}, 2)
	b := array.FromSlice([]int32{1, 10, 100}, 3)
	fmt.Println(ops.Kron(a, b))
	// Output:
	// array([  1,  10, 100,   2,  20, 200], dtype=int32)
}

func ExampleAddMM() {
	c := array.FromSlice([]float32{1, 1, 1, 1}, 2, 2)
	a := array.FromSlice([]float32{1, 2, 3, 4}, 2, 2)
	fmt.Println(ops.AddMM(c, a, a, 1, 0.5)) // a @ a + c/2
	// Output:
	// array([[ 7.5, 10.5],
	//        [15.5, 22.5]], dtype=float32)
}
