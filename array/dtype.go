package array

import (
	"fmt"
	"math"
)

// DType is the element type of an array.
type DType uint8

// The element types. The order is the order of DType values and is part of
// no contract; use the names.
const (
	Bool DType = iota
	Uint8
	Int32
	Int64
	Float16
	BFloat16
	Float32
	Float64
	Complex64
	Int8
	Int16
	Uint16
	Uint32
	Uint64
	numDTypes
)

var dtypeNames = [numDTypes]string{"bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64", "int8", "int16", "uint16", "uint32", "uint64"}
var dtypeSizes = [numDTypes]int{1, 1, 4, 8, 2, 2, 4, 8, 8, 1, 2, 2, 4, 8}

// String returns numpy's name for the dtype ("float32").
func (d DType) String() string {
	if d < numDTypes {
		return dtypeNames[d]
	}
	return fmt.Sprintf("DType(%d)", uint8(d))
}

// Size returns the size of one element in bytes.
func (d DType) Size() int {
	if d < numDTypes {
		return dtypeSizes[d]
	}
	return 0
}

// Valid reports whether d is one of the defined dtypes.
func (d DType) Valid() bool { return d < numDTypes }

// IsFloat reports whether d is a real floating-point type.
func (d DType) IsFloat() bool { return d == Float16 || d == BFloat16 || d == Float32 || d == Float64 }

// IsInteger reports whether d is an integer type (not Bool).
func (d DType) IsInteger() bool { return d.IsSigned() || d.IsUnsigned() }

// IsSigned reports whether d is a signed integer type.
func (d DType) IsSigned() bool { return d == Int8 || d == Int16 || d == Int32 || d == Int64 }

// IsUnsigned reports whether d is an unsigned integer type.
func (d DType) IsUnsigned() bool { return d == Uint8 || d == Uint16 || d == Uint32 || d == Uint64 }

// IsComplex reports whether d is a complex type.
func (d DType) IsComplex() bool { return d == Complex64 }

// IsInexact reports whether d is floating point or complex.
func (d DType) IsInexact() bool { return d.IsFloat() || d.IsComplex() }

// DTypes lists every dtype in order.
func DTypes() []DType {
	out := make([]DType, numDTypes)
	for i := range out {
		out[i] = DType(i)
	}
	return out
}

// promoteTable follows numpy's/MLX's rules for two arrays of these types.
// The departures from numpy are MLX's (and JAX's): float16 with bfloat16
// gives float32, integers with float16 or bfloat16 stay 16-bit, and uint64
// with a signed integer gives float32 (numpy: float64).
var promoteTable = func() [numDTypes][numDTypes]DType {
	var t [numDTypes][numDTypes]DType
	for a := DType(0); a < numDTypes; a++ {
		for b := DType(0); b < numDTypes; b++ {
			t[a][b] = promote(a, b)
		}
	}
	return t
}()

func promote(a, b DType) DType {
	switch {
	case a == b:
		return a
	case a == Bool:
		return b
	case b == Bool:
		return a
	case a == Complex64 || b == Complex64:
		return Complex64
	case a.IsFloat() && b.IsFloat():
		if a.Size() == b.Size() { // float16 and bfloat16
			return Float32
		}
		if a.Size() > b.Size() {
			return a
		}
		return b
	case a.IsFloat():
		return a
	case b.IsFloat():
		return b
	case a.IsSigned() == b.IsSigned(): // same kind: the wider
		if a.Size() > b.Size() {
			return a
		}
		return b
	}
	// A signed and an unsigned integer: the narrowest signed type that
	// holds both, which for uint64 does not exist.
	s, u := a, b
	if u.IsSigned() {
		s, u = b, a
	}
	switch n := max(s.Size(), 2*u.Size()); n {
	case 2:
		return Int16
	case 4:
		return Int32
	case 8:
		return Int64
	default:
		return Float32
	}
}

// Promote returns the dtype of a binary operation between arrays of
// dtypes a and b (numpy's result_type for arrays, with MLX's choices for
// the 16-bit floats).
func Promote(a, b DType) DType {
	if !a.Valid() || !b.Valid() {
		Panicf("array.Promote", "invalid dtypes %v and %v", a, b)
	}
	return promoteTable[a][b]
}

// F16 is an IEEE 754 half-precision number, the Go element type of
// arrays of dtype Float16.
type F16 uint16

// BF16 is a bfloat16 number (the top half of a float32), the Go element
// type of arrays of dtype BFloat16.
type BF16 uint16

// NewF16 rounds f to the nearest half-precision value (ties to even).
func NewF16(f float32) F16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	switch {
	case exp == 0xff: // Inf or NaN
		if man != 0 {
			return F16(sign | 0x7e00)
		}
		return F16(sign | 0x7c00)
	case exp > 142: // overflow: > 65504 after rounding handled below
		return F16(sign | 0x7c00)
	case exp < 102: // below half the smallest subnormal: rounds to zero
		return F16(sign)
	case exp < 113: // subnormal half
		man |= 0x800000
		shift := uint32(126 - exp)
		half := man >> shift
		rem := man & ((1 << shift) - 1)
		mid := uint32(1) << (shift - 1)
		if rem > mid || (rem == mid && half&1 == 1) {
			half++
		}
		return F16(sign | uint16(half))
	}
	h := uint32(exp-112)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, and to Inf: both are right
	}
	return F16(uint32(sign) | h)
}

// Float32 returns h as a float32 (exactly).
func (h F16) Float32() float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0:
		if man == 0 {
			return math.Float32frombits(sign)
		}
		// subnormal: value is man * 2^-24
		f := float32(man) * (1.0 / (1 << 24))
		if sign != 0 {
			return -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}

// String formats h like a float32.
func (h F16) String() string { return fmt.Sprint(h.Float32()) }

// NewBF16 rounds f to the nearest bfloat16 value (ties to even).
func NewBF16(f float32) BF16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it a quiet NaN
		return BF16(b>>16 | 0x40)
	}
	b += 0x7fff + (b>>16)&1
	return BF16(b >> 16)
}

// Float32 returns b as a float32 (exactly).
func (b BF16) Float32() float32 { return math.Float32frombits(uint32(b) << 16) }

// String formats b like a float32.
func (b BF16) String() string { return fmt.Sprint(b.Float32()) }

// Elem is the set of Go element types, one per DType.
type Elem interface {
	bool | uint8 | int32 | int64 | F16 | BF16 | float32 | float64 | complex64 |
		int8 | int16 | uint16 | uint32 | uint64
}

// DTypeOf returns the dtype whose Go element type is T.
func DTypeOf[T Elem]() DType {
	var z T
	switch any(z).(type) {
	case bool:
		return Bool
	case uint8:
		return Uint8
	case int32:
		return Int32
	case int64:
		return Int64
	case F16:
		return Float16
	case BF16:
		return BFloat16
	case float32:
		return Float32
	case float64:
		return Float64
	case int8:
		return Int8
	case int16:
		return Int16
	case uint16:
		return Uint16
	case uint32:
		return Uint32
	case uint64:
		return Uint64
	default:
		return Complex64
	}
}
