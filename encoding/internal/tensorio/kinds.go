// Package tensorio is what encoding/npy and encoding/safetensors share:
// the table of element types as the file formats name them, byte order,
// the atomic file write, the row-major byte stream of an array, and the
// lazy primitive that fills an array from a file when it is evaluated.
package tensorio

import (
	"fmt"

	"github.com/fathom-go/fathom/array"
)

// Kind is one element type as the file formats name it.
type Kind struct {
	Name        string      // numpy's name: "float32"
	NPY         string      // numpy's type code without byte order ("f4"); "" where numpy has none
	Safetensors string      // safetensors' dtype ("F32"); "" where safetensors has none
	Bits        int         // bits per element
	DType       array.DType // fathom's dtype, or NotYet
	// stRank is the dtype's place in the reference safetensors writer's
	// Dtype enum, which is in increasing alignment: Save orders tensors by
	// it, descending, as that writer does, so every tensor is aligned.
	stRank int
}

// NotYet marks a kind fathom has no dtype for. When fathom gains one, its
// line in kinds names the dtype instead, and both formats load and save
// it.
const NotYet = array.DType(255)

// kinds lists every element type either format can hold. One line each:
// name, numpy code, safetensors dtype, bits, fathom dtype (or NotYet),
// rank in safetensors' Dtype enum.
var kinds = []Kind{
	{"bool", "b1", "BOOL", 8, array.Bool, 0},
	{"float4_e2m1", "", "F4", 4, NotYet, 1},
	{"float6_e2m3", "", "F6_E2M3", 6, NotYet, 2},
	{"float6_e3m2", "", "F6_E3M2", 6, NotYet, 3},
	{"uint8", "u1", "U8", 8, array.Uint8, 4},
	{"int8", "i1", "I8", 8, array.Int8, 5},
	{"float8_e5m2", "", "F8_E5M2", 8, NotYet, 6},
	{"float8_e4m3", "", "F8_E4M3", 8, NotYet, 7},
	{"float8_e8m0", "", "F8_E8M0", 8, NotYet, 8},
	{"int16", "i2", "I16", 16, array.Int16, 9},
	{"uint16", "u2", "U16", 16, array.Uint16, 10},
	{"float16", "f2", "F16", 16, array.Float16, 11},
	{"bfloat16", "", "BF16", 16, array.BFloat16, 12},
	{"int32", "i4", "I32", 32, array.Int32, 13},
	{"uint32", "u4", "U32", 32, array.Uint32, 14},
	{"float32", "f4", "F32", 32, array.Float32, 15},
	{"complex64", "c8", "C64", 64, array.Complex64, 16},
	{"float64", "f8", "F64", 64, array.Float64, 17},
	{"int64", "i8", "I64", 64, array.Int64, 18},
	{"uint64", "u8", "U64", 64, array.Uint64, 19},
	{"complex128", "c16", "", 128, NotYet, 20},
}

// Supported reports whether fathom has a dtype for k.
func (k Kind) Supported() bool { return k.DType != NotYet }

// Size is the size of one element in bytes (0 for the sub-byte kinds).
func (k Kind) Size() int { return k.Bits / 8 }

// WordSize is the size of the numbers a little/big-endian swap reverses:
// the element size, but a complex number's halves are swapped separately.
func (k Kind) WordSize() int {
	if k.Name == "complex64" || k.Name == "complex128" {
		return k.Size() / 2
	}
	return k.Size()
}

// Rank is the kind's place in safetensors' alignment order.
func (k Kind) Rank() int { return k.stRank }

// UnsupportedMsg says why a file's element type cannot be loaded.
func (k Kind) UnsupportedMsg() string {
	return fmt.Sprintf("dtype %s is not supported yet: fathom has no %s arrays", k.Name, k.Name)
}

// FromNPY returns the kind of a numpy type code without byte order ("f4").
func FromNPY(code string) (Kind, bool) {
	for _, k := range kinds {
		if k.NPY != "" && k.NPY == code {
			return k, true
		}
	}
	return Kind{}, false
}

// FromSafetensors returns the kind of a safetensors dtype ("F32").
func FromSafetensors(name string) (Kind, bool) {
	for _, k := range kinds {
		if k.Safetensors != "" && k.Safetensors == name {
			return k, true
		}
	}
	return Kind{}, false
}

// FromDType returns the kind of a fathom dtype.
func FromDType(dt array.DType) (Kind, bool) {
	for _, k := range kinds {
		if k.DType == dt && dt != NotYet {
			return k, true
		}
	}
	return Kind{}, false
}

// Kinds returns every kind, for tests.
func Kinds() []Kind { return append([]Kind(nil), kinds...) }
