package array_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/fathom-go/fathom/array"
)

func TestDTypeStringAndSize(t *testing.T) {
	want := []struct {
		d    array.DType
		name string
		size int
	}{
		{array.Bool, "bool", 1},
		{array.Uint8, "uint8", 1},
		{array.Int32, "int32", 4},
		{array.Int64, "int64", 8},
		{array.Float16, "float16", 2},
		{array.BFloat16, "bfloat16", 2},
		{array.Float32, "float32", 4},
		{array.Float64, "float64", 8},
		{array.Complex64, "complex64", 8},
		{array.Int8, "int8", 1},
		{array.Int16, "int16", 2},
		{array.Uint16, "uint16", 2},
		{array.Uint32, "uint32", 4},
		{array.Uint64, "uint64", 8},
	}
	if got := array.DTypes(); len(got) != len(want) {
		t.Fatalf("DTypes() has %d dtypes, want %d", len(got), len(want))
	}
	for i, w := range want {
		if d := array.DTypes()[i]; d != w.d {
			t.Errorf("DTypes()[%d] = %v, want %v", i, d, w.d)
		}
		if got := w.d.String(); got != w.name {
			t.Errorf("%d.String() = %q, want %q", w.d, got, w.name)
		}
		if got := w.d.Size(); got != w.size {
			t.Errorf("%v.Size() = %d, want %d", w.d, got, w.size)
		}
		if !w.d.Valid() {
			t.Errorf("%v.Valid() = false", w.d)
		}
	}
	bad := array.DType(200)
	if bad.Valid() || bad.Size() != 0 || bad.String() != "DType(200)" {
		t.Errorf("DType(200): Valid %v, Size %d, String %q", bad.Valid(), bad.Size(), bad.String())
	}
}

func TestDTypeKinds(t *testing.T) {
	for _, c := range []struct {
		d                                array.DType
		float, integer, complex, inexact bool
	}{
		{array.Bool, false, false, false, false},
		{array.Uint8, false, true, false, false},
		{array.Int32, false, true, false, false},
		{array.Int64, false, true, false, false},
		{array.Float16, true, false, false, true},
		{array.BFloat16, true, false, false, true},
		{array.Float32, true, false, false, true},
		{array.Float64, true, false, false, true},
		{array.Complex64, false, false, true, true},
		{array.Int8, false, true, false, false},
		{array.Int16, false, true, false, false},
		{array.Uint16, false, true, false, false},
		{array.Uint32, false, true, false, false},
		{array.Uint64, false, true, false, false},
	} {
		if c.d.IsFloat() != c.float || c.d.IsInteger() != c.integer || c.d.IsComplex() != c.complex || c.d.IsInexact() != c.inexact {
			t.Errorf("%v: IsFloat %v IsInteger %v IsComplex %v IsInexact %v", c.d, c.d.IsFloat(), c.d.IsInteger(), c.d.IsComplex(), c.d.IsInexact())
		}
	}
}

func TestDTypeOf(t *testing.T) {
	for _, c := range []struct{ got, want array.DType }{
		{array.DTypeOf[bool](), array.Bool},
		{array.DTypeOf[uint8](), array.Uint8},
		{array.DTypeOf[int32](), array.Int32},
		{array.DTypeOf[int64](), array.Int64},
		{array.DTypeOf[array.F16](), array.Float16},
		{array.DTypeOf[array.BF16](), array.BFloat16},
		{array.DTypeOf[float32](), array.Float32},
		{array.DTypeOf[float64](), array.Float64},
		{array.DTypeOf[complex64](), array.Complex64},
	} {
		if c.got != c.want {
			t.Errorf("DTypeOf = %v, want %v", c.got, c.want)
		}
	}
}

// mlxPromotions are the pairs where Promote deliberately departs from
// numpy's result_type, following MLX (and JAX): integers with float16 or
// float32 keep the float's width instead of widening, uint64 with a signed
// integer gives float32 (numpy: float64), and complex64 is the only complex
// type, so nothing promotes to complex128.
var mlxPromotions = func() map[[2]array.DType]array.DType {
	m := map[[2]array.DType]array.DType{{array.Float64, array.Complex64}: array.Complex64}
	for _, i := range []array.DType{array.Uint8, array.Uint16, array.Uint32, array.Uint64, array.Int8, array.Int16, array.Int32, array.Int64} {
		m[[2]array.DType{i, array.Float16}] = array.Float16
		m[[2]array.DType{i, array.Float32}] = array.Float32
		m[[2]array.DType{i, array.Complex64}] = array.Complex64
		if i.IsSigned() {
			m[[2]array.DType{i, array.Uint64}] = array.Float32
		}
	}
	return m
}()

// bfloat16Promotions is MLX's row for bfloat16, which numpy lacks: it
// behaves as float16 does, and meeting float16 gives float32, the
// narrowest type that holds both.
var bfloat16Promotions = map[array.DType]array.DType{
	array.Bool:      array.BFloat16,
	array.Uint8:     array.BFloat16,
	array.Uint16:    array.BFloat16,
	array.Uint32:    array.BFloat16,
	array.Uint64:    array.BFloat16,
	array.Int8:      array.BFloat16,
	array.Int16:     array.BFloat16,
	array.Int32:     array.BFloat16,
	array.Int64:     array.BFloat16,
	array.Float16:   array.Float32,
	array.BFloat16:  array.BFloat16,
	array.Float32:   array.Float32,
	array.Float64:   array.Float64,
	array.Complex64: array.Complex64,
}

func dtypeByName(t *testing.T, name string) array.DType {
	t.Helper()
	for _, d := range array.DTypes() {
		if d.String() == name {
			return d
		}
	}
	t.Fatalf("unknown dtype %q", name)
	return 0
}

// TestPromoteMatchesNumpy checks every pair against numpy's result_type
// (testdata/promote.json, from gen_promote.py), apart from the documented
// MLX choices above.
func TestPromoteMatchesNumpy(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "promote.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Result map[string]map[string]string `json:"result"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for an, row := range f.Result {
		a := dtypeByName(t, an)
		for bn, rn := range row {
			b := dtypeByName(t, bn)
			got := array.Promote(a, b)
			want, mlx := mlxPromotions[[2]array.DType{a, b}]
			if !mlx {
				want, mlx = mlxPromotions[[2]array.DType{b, a}]
			}
			if mlx {
				if got != want {
					t.Errorf("Promote(%v, %v) = %v, want %v (MLX; numpy gives %s)", a, b, got, want, rn)
				}
			} else if got.String() != rn {
				t.Errorf("Promote(%v, %v) = %v, numpy gives %s", a, b, got, rn)
			}
			checked++
		}
	}
	if checked != 169 {
		t.Errorf("checked %d pairs, want 169 (13 numpy dtypes squared)", checked)
	}
	for d, want := range bfloat16Promotions {
		if got := array.Promote(array.BFloat16, d); got != want {
			t.Errorf("Promote(bfloat16, %v) = %v, want %v", d, got, want)
		}
		if got := array.Promote(d, array.BFloat16); got != want {
			t.Errorf("Promote(%v, bfloat16) = %v, want %v", d, got, want)
		}
	}
}

func TestPromoteInvalid(t *testing.T) {
	err := array.Try(func() { array.Promote(array.Float32, array.DType(99)) })
	if e, ok := err.(*array.Error); !ok || e.Op != "array.Promote" {
		t.Fatalf("Promote with an invalid dtype: got %v, want *array.Error from array.Promote", err)
	}
}

// readDelta reads a gzipped, delta-coded little-endian file written by
// gen_float16.py and returns the decoded words.
func readDelta(t *testing.T, name string, size int) []uint64 {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	z, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]uint64, len(b)/size)
	var prev uint64
	for i := range out {
		var d uint64
		if size == 2 {
			d = uint64(binary.LittleEndian.Uint16(b[2*i:]))
		} else {
			d = uint64(binary.LittleEndian.Uint32(b[4*i:]))
		}
		prev = (prev + d) & (1<<(8*size) - 1)
		out[i] = prev
	}
	return out
}

// TestF16ToFloat32MatchesNumpy converts every float16 bit pattern.
func TestF16ToFloat32MatchesNumpy(t *testing.T) {
	want := readDelta(t, "float16_to_float32.u32.gz", 4)
	if len(want) != 1<<16 {
		t.Fatalf("%d values, want 65536", len(want))
	}
	for h := range 1 << 16 {
		if got := math.Float32bits(array.F16(h).Float32()); uint64(got) != want[h] {
			t.Errorf("F16(%#04x).Float32() = %#08x, numpy %#08x", h, got, want[h])
		}
	}
}

// f32Inputs mirrors float32_inputs in gen_float16.py: every float16, the
// ties between neighbours and the float32 values either side of each tie,
// a sweep over the whole float32 bit space, and special values.
func f32Inputs() []uint32 {
	var out []uint32
	for h := range 0x7c00 {
		v := array.F16(h).Float32()
		next := float32(65536)
		if h != 0x7bff {
			next = array.F16(h + 1).Float32()
		}
		m := math.Float32bits(float32((float64(v) + float64(next)) / 2))
		out = append(out, math.Float32bits(v), m-1, m, m+1)
	}
	for _, b := range out[:len(out):len(out)] {
		out = append(out, b|0x80000000)
	}
	for k := range 65553 {
		out = append(out, uint32(k*65521))
	}
	return append(out,
		0x00000000, 0x80000000, 0x7F800000, 0xFF800000,
		0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFFFFFF, 0x7FA00000, 0xFF802000,
		0x00000001, 0x007FFFFF, 0x00800000,
		0x33000000, 0x32FFFFFF, 0x33000001,
		0x33400000, 0x33C00000, 0x34200000,
		0x387FC000, 0x387FE000, 0x38800000,
		0x477FE000, 0x477FEFFF, 0x477FF000, 0x477FF001, 0x47800000,
		0x7F7FFFFF, 0x501502F9,
	)
}

// TestNewF16MatchesNumpy rounds float32 values to float16 as numpy's
// astype(float16) does: to nearest, ties to even, overflow to infinity,
// through the subnormals. The one difference is NaN payloads: numpy keeps
// the top payload bits (a signalling NaN stays signalling), NewF16 returns
// the quiet NaN of the same sign, as hardware conversions do; there only
// NaN-ness and sign are compared.
func TestNewF16MatchesNumpy(t *testing.T) {
	in := f32Inputs()
	want := readDelta(t, "float32_to_float16.u16.gz", 2)
	if len(want) != len(in) {
		t.Fatalf("%d expected values for %d inputs", len(want), len(in))
	}
	bad := 0
	for i, b := range in {
		f := math.Float32frombits(b)
		got := uint16(array.NewF16(f))
		w := uint16(want[i])
		ok := got == w
		if isNaN16(w) {
			ok = isNaN16(got) && got&0x8000 == w&0x8000
		}
		if !ok && bad < 20 {
			bad++
			t.Errorf("NewF16(%g = %#08x) = %#04x, numpy %#04x", f, b, got, w)
		}
	}
}

func isNaN16(h uint16) bool { return h&0x7c00 == 0x7c00 && h&0x3ff != 0 }

func TestNewF16RoundTrip(t *testing.T) {
	for h := range 1 << 16 {
		if isNaN16(uint16(h)) {
			continue
		}
		if got := array.NewF16(array.F16(h).Float32()); got != array.F16(h) {
			t.Errorf("NewF16(F16(%#04x).Float32()) = %#04x", h, uint16(got))
		}
	}
}

// TestNewBF16 checks rounding to bfloat16 against hand-computed bits:
// bfloat16 is the top half of a float32, rounded to nearest, ties to even.
func TestNewBF16(t *testing.T) {
	for _, c := range []struct {
		in   uint32
		want uint16
		why  string
	}{
		{0x3f800000, 0x3f80, "1 is exact"},
		{0xbfc00000, 0xbfc0, "-1.5 is exact"},
		{0x80000000, 0x8000, "-0 keeps its sign"},
		{0x3f807fff, 0x3f80, "just below the tie rounds down"},
		{0x3f808000, 0x3f80, "tie rounds to the even 0x3f80"},
		{0x3f808001, 0x3f81, "just above the tie rounds up"},
		{0x3f818000, 0x3f82, "tie rounds to the even 0x3f82"},
		{0x3f81ffff, 0x3f82, "rounds up"},
		{0x3fffffff, 0x4000, "carries into the exponent: 2"},
		{0x00008000, 0x0000, "subnormal tie rounds to even zero"},
		{0x00018000, 0x0002, "subnormal tie rounds to even 2"},
		{0x00010000, 0x0001, "smallest bfloat16 subnormal"},
		{0x7f7f7fff, 0x7f7f, "largest float32 that stays finite"},
		{0x7f7f8000, 0x7f80, "tie above the largest bfloat16 rounds to +inf"},
		{0x7f7fffff, 0x7f80, "max float32 rounds to +inf"},
		{0xff7fffff, 0xff80, "-max float32 rounds to -inf"},
		{0x7f800000, 0x7f80, "+inf"},
		{0xff800000, 0xff80, "-inf"},
		{0x7fc00000, 0x7fc0, "quiet NaN"},
		{0xffc00000, 0xffc0, "negative quiet NaN"},
		{0x7f800001, 0x7fc0, "NaN with only low payload bits stays NaN (not inf)"},
		{0x7fa00000, 0x7fe0, "signalling NaN is quieted, payload kept"},
		{0xffffffff, 0xffff, "all-ones NaN"},
	} {
		if got := uint16(array.NewBF16(math.Float32frombits(c.in))); got != c.want {
			t.Errorf("NewBF16(%#08x) = %#04x, want %#04x: %s", c.in, got, c.want, c.why)
		}
	}
}

func TestBF16Float32(t *testing.T) {
	for b := range 1 << 16 {
		if got := math.Float32bits(array.BF16(b).Float32()); got != uint32(b)<<16 {
			t.Fatalf("BF16(%#04x).Float32() = %#08x, want %#08x", b, got, uint32(b)<<16)
		}
	}
	if got := array.NewBF16(1.5).String(); got != "1.5" {
		t.Errorf("BF16 1.5 String = %q", got)
	}
	if got := array.NewF16(-0.25).String(); got != "-0.25" {
		t.Errorf("F16 -0.25 String = %q", got)
	}
}
