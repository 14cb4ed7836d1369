package array

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/fathom-go/fathom/internal/strided"
)

// Format implements fmt.Formatter, so that the fmt verbs print an array
// rather than the struct behind it:
//
//	%v, %s    numpy's repr, as String: array([1.5, 2. ], dtype=float32)
//	%+v       the same with the shape: array([1.5, 2. ], shape=(2,), dtype=float32)
//	%#v       Go syntax that rebuilds the array: array.FromSlice([]float32{1.5, 2})
//	%f %F %e %E %g %G
//	          each element as fmt formats a float64 (a complex one as
//	          1.00+2.00j), laid out as numpy's str: [[1.00 2.00]
//	                                                 [3.00 4.00]]
//	%d %b %o %x %X
//	          likewise, for integer dtypes
//	%t        likewise, for bool
//
// With the element verbs, the flags (+ - space 0 #), the width and the
// precision apply to each element as fmt applies them to one number; the
// elements are then padded to a common width (on the left, or on the
// right with -) so that columns line up, as gonum's mat.Formatted does.
// Float32, float16 and bfloat16 elements take the shortest digits of
// their own precision under %g without a precision. Arrays of more than
// 1000 elements are summarised with "..." as String summarises them,
// except under %#v, which writes every element.
//
// Format evaluates the array. An array that cannot be evaluated prints
// as "array(<error: ...>)" under every verb; a verb that does not apply
// to the dtype prints as fmt prints a bad verb:
// "%!d(*array.Array=float32 [2 3])".
func (a *Array) Format(s fmt.State, verb rune) {
	if a == nil {
		io.WriteString(s, "<nil>")
		return
	}
	switch verb {
	case 'v':
		switch {
		case s.Flag('#'):
			io.WriteString(s, a.goSyntax())
		case s.Flag('+'):
			io.WriteString(s, a.repr(true))
		default:
			io.WriteString(s, a.String())
		}
		return
	case 's':
		io.WriteString(s, a.String())
		return
	}
	if !verbFits(verb, a.dtype) {
		fmt.Fprintf(s, "%%!%c(*array.Array=%v %v)", verb, a.dtype, a.shape)
		return
	}
	if err := a.Eval(); err != nil {
		io.WriteString(s, errorText(err))
		return
	}
	io.WriteString(s, a.formatElems(s, verb))
}

// verbFits reports whether an element verb applies to dtype dt.
func verbFits(verb rune, dt DType) bool {
	switch verb {
	case 'f', 'F', 'e', 'E', 'g', 'G':
		return dt != Bool
	case 'd', 'b', 'o', 'x', 'X':
		return dt.IsInteger()
	case 't':
		return dt == Bool
	}
	return false
}

// formatElems lays out the shown elements of an evaluated array, each
// formatted by the verb, as numpy's str does.
func (a *Array) formatElems(s fmt.State, verb rune) string {
	if a.size == 0 {
		return "[]"
	}
	offs, summarise := a.shownOffsets()
	mem := a.data.Load().storage.bytes
	spec, plain := verbSpec(s, verb, true), verbSpec(s, verb, false)
	elems := make([]string, len(offs))
	width := 0
	for i, o := range offs {
		elems[i] = formatElem(a.dtype, mem, o, verb, spec, plain, s)
		width = max(width, len(elems[i]))
	}
	left := s.Flag('-')
	for i, e := range elems {
		pad := strings.Repeat(" ", width-len(e))
		if left {
			elems[i] = e + pad
		} else {
			elems[i] = pad + e
		}
	}
	if len(a.shape) == 0 {
		return elems[0]
	}
	p := printer{shape: a.shape, elems: elems, summarise: summarise, sep: " "}
	// numpy's str: no prefix, so continuation lines hang one space in
	return p.recurse(0, " ", printWidth)
}

// verbSpec rebuilds the verb's format string from s: with the width when
// withWidth is set, without it (for the parts of a complex number)
// otherwise.
func verbSpec(s fmt.State, verb rune, withWidth bool) string {
	var b strings.Builder
	b.WriteByte('%')
	for _, f := range "+- #0" {
		if s.Flag(int(f)) {
			b.WriteRune(f)
		}
	}
	if w, ok := s.Width(); ok && withWidth {
		b.WriteString(strconv.Itoa(w))
	}
	if p, ok := s.Precision(); ok {
		b.WriteByte('.')
		b.WriteString(strconv.Itoa(p))
	}
	b.WriteRune(verb)
	return b.String()
}

// formatElem formats the element of dtype dt at storage offset o. spec is
// the full format; plain is the format without the width.
func formatElem(dt DType, mem []byte, o int, verb rune, spec, plain string, s fmt.State) string {
	p := unsafe.Pointer(&mem[o*dt.Size()])
	_, hasPrec := s.Precision()
	shortestG := !hasPrec && (verb == 'g' || verb == 'G')
	switch dt {
	case Bool:
		return fmt.Sprintf(spec, *(*bool)(p))
	case Float16, BFloat16:
		var v float32
		if dt == Float16 {
			v = (*(*F16)(p)).Float32()
		} else {
			v = (*(*BF16)(p)).Float32()
		}
		if shortestG && !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
			// the float64 nearest the 16-bit value's shortest decimal,
			// which %g then prints as that decimal
			return fmt.Sprintf(spec, shortestValue(float64(v), dt))
		}
		return fmt.Sprintf(spec, v)
	case Float32:
		return fmt.Sprintf(spec, *(*float32)(p))
	case Float64:
		return fmt.Sprintf(spec, *(*float64)(p))
	case Complex64:
		c := *(*complex64)(p)
		re := fmt.Sprintf(plain, real(c))
		im := fmt.Sprintf("%+"+plain[1:], imag(c))
		text := re + im + "j"
		w, ok := s.Width()
		if !ok || len(text) >= w {
			return text
		}
		if s.Flag('-') {
			return text + strings.Repeat(" ", w-len(text))
		}
		return strings.Repeat(" ", w-len(text)) + text
	}
	var u uint64
	var i int64
	signed := true
	switch dt {
	case Uint8:
		u, signed = uint64(*(*uint8)(p)), false
	case Uint16:
		u, signed = uint64(*(*uint16)(p)), false
	case Uint32:
		u, signed = uint64(*(*uint32)(p)), false
	case Uint64:
		u, signed = *(*uint64)(p), false
	case Int8:
		i = int64(*(*int8)(p))
	case Int16:
		i = int64(*(*int16)(p))
	case Int32:
		i = int64(*(*int32)(p))
	default:
		i = *(*int64)(p)
	}
	switch {
	case verb == 'd' || verb == 'b' || verb == 'o' || verb == 'x' || verb == 'X':
		if signed {
			return fmt.Sprintf(spec, i)
		}
		return fmt.Sprintf(spec, u)
	case signed:
		return fmt.Sprintf(spec, float64(i))
	}
	return fmt.Sprintf(spec, float64(u))
}

// shortestValue returns the float64 closest to the shortest decimal that
// identifies finite v in dtype dt.
func shortestValue(v float64, dt DType) float64 {
	d := shortest(v, dt)
	r, _ := strconv.ParseFloat(d.digits[:1]+"."+d.digits[1:]+"e"+strconv.Itoa(d.exp), 64)
	return math.Copysign(r, v)
}

// goSyntax writes Go source that rebuilds the array, every element
// included: array.FromSlice([]float32{1, 2, 3, 4}, 2, 2), or
// array.Scalar[int32](7) for a 0-d array.
func (a *Array) goSyntax() string {
	if err := a.Eval(); err != nil {
		return errorText(err)
	}
	typ := goType(a.dtype)
	d := a.data.Load()
	lits := make([]string, 0, a.size)
	if a.size > 0 {
		strided.ForEachOffset(a.shape, d.strides, d.offset, func(o int) {
			lits = append(lits, goLiteral(a.dtype, d.storage.bytes, o))
		})
	}
	if len(a.shape) == 0 {
		return "array.Scalar[" + typ + "](" + lits[0] + ")"
	}
	var b strings.Builder
	b.WriteString("array.FromSlice([]" + typ + "{" + strings.Join(lits, ", ") + "}")
	if len(a.shape) > 1 {
		for _, n := range a.shape {
			b.WriteString(", " + strconv.Itoa(n))
		}
	}
	b.WriteByte(')')
	return b.String()
}

// goType is the Go element type of dt as a program outside package array
// spells it.
func goType(dt DType) string {
	switch dt {
	case Float16:
		return "array.F16"
	case BFloat16:
		return "array.BF16"
	}
	return dt.String()
}

// goLiteral writes the element at storage offset o as a Go expression of
// dt's element type: a constant where one exists, a call of package math
// for NaN, the infinities and -0.
func goLiteral(dt DType, mem []byte, o int) string {
	p := unsafe.Pointer(&mem[o*dt.Size()])
	switch dt {
	case Bool:
		return strconv.FormatBool(*(*bool)(p))
	case Uint8:
		return strconv.FormatUint(uint64(*(*uint8)(p)), 10)
	case Uint16:
		return strconv.FormatUint(uint64(*(*uint16)(p)), 10)
	case Uint32:
		return strconv.FormatUint(uint64(*(*uint32)(p)), 10)
	case Uint64:
		return strconv.FormatUint(*(*uint64)(p), 10)
	case Int8:
		return strconv.FormatInt(int64(*(*int8)(p)), 10)
	case Int16:
		return strconv.FormatInt(int64(*(*int16)(p)), 10)
	case Int32:
		return strconv.FormatInt(int64(*(*int32)(p)), 10)
	case Int64:
		return strconv.FormatInt(*(*int64)(p), 10)
	case Float16:
		// the bits: most float16 values have no short exact decimal
		return fmt.Sprintf("%#04x", uint16(*(*F16)(p)))
	case BFloat16:
		return fmt.Sprintf("%#04x", uint16(*(*BF16)(p)))
	case Float32:
		return floatLiteral(float64(*(*float32)(p)), 32)
	case Float64:
		return floatLiteral(*(*float64)(p), 64)
	}
	c := *(*complex64)(p)
	return "complex(" + floatLiteral(float64(real(c)), 32) + ", " + floatLiteral(float64(imag(c)), 32) + ")"
}

// floatLiteral writes v, a float of the given bit size, as a Go
// expression of that type.
func floatLiteral(v float64, bits int) string {
	var s string
	switch {
	case math.IsNaN(v):
		s = "math.NaN()"
	case math.IsInf(v, 0):
		s = "math.Inf(" + strconv.Itoa(int(math.Copysign(1, v))) + ")"
	case v == 0 && math.Signbit(v):
		s = "math.Copysign(0, -1)"
	default:
		return strconv.FormatFloat(v, 'g', -1, bits)
	}
	if bits == 32 {
		return "float32(" + s + ")"
	}
	return s
}
