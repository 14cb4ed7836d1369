package cpu

import (
	"bytes"
	"math"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

// smallBytes returns vals in dtype dt, as bytes.
func smallBytes(dt array.DType, vals []float64) []byte {
	out := make([]byte, len(vals)*dt.Size())
	for i, v := range vals {
		p := out[i*dt.Size():]
		switch dt {
		case array.Bool:
			ewBytesOf(p, v != 0)
		case array.Uint8:
			ewBytesOf(p, uint8(int64(v)))
		case array.Int8:
			ewBytesOf(p, int8(v))
		case array.Int16:
			ewBytesOf(p, int16(v))
		case array.Uint16:
			ewBytesOf(p, uint16(int64(v)))
		case array.Int32:
			ewBytesOf(p, int32(v))
		case array.Uint32:
			ewBytesOf(p, uint32(int64(v)))
		case array.Int64:
			ewBytesOf(p, int64(v))
		case array.Uint64:
			ewBytesOf(p, uint64(int64(v)))
		case array.Float16:
			ewBytesOf(p, array.NewF16(float32(v)))
		case array.BFloat16:
			ewBytesOf(p, array.NewBF16(float32(v)))
		case array.Float32:
			ewBytesOf(p, float32(v))
		case array.Float64:
			ewBytesOf(p, v)
		case array.Complex64:
			ewBytesOf(p, complex(float32(v), float32(-v/2)))
		}
	}
	return out
}

func ewBytesOf[T any](dst []byte, v T) { copy(dst, ewBytes([]T{v})) }

// smallVals are n values in [-7.5, 8), whole and fractional, positive
// and negative, that every dtype can hold after conversion.
func smallVals(n, seed int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64((i*7+seed*3)%32)/2 - 7.5
	}
	return v
}

// column is the n×1 view of data: the same elements as a flat operand,
// taken by runBinary's and runUnary's general walk instead.
func column(data []byte, dt array.DType, n int, repeat bool) Buf {
	st := 1
	if repeat {
		st = 0
	}
	return Buf{Data: data, DType: dt, Shape: []int{n, 1}, Strides: []int{st, st}}
}

// TestBinaryFlatMatchesBinary checks BinaryFlat, the path of small
// contiguous operands, against Binary's general walk, for every dtype and
// op, contiguous and repeated operands, below and above the serial size.
func TestBinaryFlatMatchesBinary(t *testing.T) {
	for dt := array.DType(0); dt.Valid(); dt++ {
		for op := range opset.NumBinaryOps {
			want, ok := op.Result(dt)
			if !ok {
				continue
			}
			sizes := []int{0, 1, 5, 37}
			if dt == array.Float32 && op == opset.Add {
				sizes = append(sizes, grain+3)
			}
			for _, n := range sizes {
				a, b := smallBytes(dt, smallVals(n, 1)), smallBytes(dt, smallVals(n, 2))
				for _, c := range []struct {
					name       string
					repA, repB bool
				}{{"both", false, false}, {"scalar b", false, true}, {"scalar a", true, false}} {
					if n == 0 && (c.repA || c.repB) {
						continue
					}
					ref := make([]byte, n*want.Size())
					if err := Binary(op, column(ref, want, n, false), column(a, dt, n, c.repA), column(b, dt, n, c.repB)); err != nil {
						t.Fatalf("%v %v: %v", op, dt, err)
					}
					got := make([]byte, n*want.Size())
					fa, fb := Flat{Data: a, Repeat: c.repA}, Flat{Data: b, Repeat: c.repB}
					if err := BinaryFlat(op, dt, n, got, fa, fb); err != nil {
						t.Fatalf("%v %v: %v", op, dt, err)
					}
					if !bytes.Equal(got, ref) {
						t.Errorf("%v %v n=%d %s: BinaryFlat differs from Binary", op, dt, n, c.name)
					}
				}
			}
		}
	}
	// a value known without Binary: 0.5 + [1 2 3] in float32
	got := make([]byte, 12)
	if err := BinaryFlat(opset.Add, array.Float32, 3, got, Flat{Data: ewBytes([]float32{1, 2, 3})}, Flat{Data: ewBytes([]float32{0.5}), Repeat: true}); err != nil {
		t.Fatal(err)
	}
	if want := ewBytes([]float32{1.5, 2.5, 3.5}); !bytes.Equal(got, want) {
		t.Errorf("[1 2 3] + 0.5 = %v, want %v", got, want)
	}
}

// TestUnaryFlatMatchesUnary checks UnaryFlat against Unary's general
// walk for every dtype and op.
func TestUnaryFlatMatchesUnary(t *testing.T) {
	for dt := array.DType(0); dt.Valid(); dt++ {
		for op := range opset.NumUnaryOps {
			want, ok := op.Result(dt)
			if !ok {
				continue
			}
			for _, n := range []int{0, 1, 6, 41} {
				x := smallBytes(dt, smallVals(n, 3))
				ref := make([]byte, n*want.Size())
				if err := Unary(op, column(ref, want, n, false), column(x, dt, n, false)); err != nil {
					t.Fatalf("%v %v: %v", op, dt, err)
				}
				got := make([]byte, n*want.Size())
				if err := UnaryFlat(op, dt, n, got, x); err != nil {
					t.Fatalf("%v %v: %v", op, dt, err)
				}
				if !bytes.Equal(got, ref) {
					t.Errorf("%v %v n=%d: UnaryFlat differs from Unary", op, dt, n)
				}
			}
		}
	}
	got := make([]byte, 16)
	if err := UnaryFlat(opset.Sqrt, array.Float64, 2, got, ewBytes([]float64{4, 2})); err != nil {
		t.Fatal(err)
	}
	if want := ewBytes([]float64{2, math.Sqrt2}); !bytes.Equal(got, want) {
		t.Errorf("sqrt [4 2] = %v, want %v", got, want)
	}
}

// TestFlatErrors checks that the flat kernels refuse an op a dtype does
// not define, and memory too short for n elements, with errors that name
// them rather than reading out of bounds.
func TestFlatErrors(t *testing.T) {
	if err := BinaryFlat(opset.Div, array.Int32, 1, make([]byte, 4), Flat{Data: make([]byte, 4)}, Flat{Data: make([]byte, 4)}); err == nil {
		t.Error("Div of int32: no error")
	}
	if err := UnaryFlat(opset.Neg, array.Bool, 1, make([]byte, 1), make([]byte, 1)); err == nil {
		t.Error("Neg of bool: no error")
	}
	err := array.Try(func() {
		_ = BinaryFlat(opset.Add, array.Float32, 4, make([]byte, 16), Flat{Data: make([]byte, 16)}, Flat{Data: make([]byte, 12)})
	})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("fewer than 4 elements")) {
		t.Errorf("short operand: %v", err)
	}
	err = array.Try(func() { _ = UnaryFlat(opset.Neg, array.Float64, 3, make([]byte, 16), make([]byte, 24)) })
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("fewer than 3 elements")) {
		t.Errorf("short output: %v", err)
	}
}
