package array

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unsafe"
)

// Printing reproduces numpy's repr with numpy's default print options
// (testdata/gen_print.py holds the reference strings): nested brackets
// aligned under "array(", lines wrapped at printWidth columns, elements
// padded to a common width with the decimal points aligned, and arrays of
// more than printThreshold elements summarised with "..." keeping
// printEdge items at each end of every axis. Floats take the shortest
// digits that read back to the same value in the array's own precision
// (so float16 0.1 prints as 0.1), at most printPrecision of them after the
// point, and switch to scientific notation together when the magnitudes
// call for it.
//
// The differences from numpy are deliberate: the dtype is always shown
// (numpy leaves it out for float64, int64 and bool; MLX shows it), and
// bfloat16, which numpy lacks, prints by the same rules as float16 with its
// own precision.
const (
	printThreshold = 1000
	printEdge      = 3
	printWidth     = 75
	printPrecision = 8
)

// String evaluates the array and formats it like numpy's repr:
// "array([[1, 2],\n       [3, 4]], dtype=int32)". An array that cannot be
// evaluated formats as "array(<error: ...>)": printing has no way to
// return the error, so it shows it; ItemOf, ToSlice and Eval return it.
func (a *Array) String() string { return a.repr(false) }

// repr formats a as numpy's repr. withShape adds the shape before the
// dtype ("shape=(2, 3), dtype=float32)") where numpy leaves it out.
func (a *Array) repr(withShape bool) string {
	if err := a.Eval(); err != nil {
		return errorText(err)
	}
	var b strings.Builder
	b.WriteString("array(")
	shown := false
	switch {
	case a.size > 0:
		b.WriteString(a.formatData())
	case len(a.shape) == 1:
		b.WriteString("[]")
	default:
		b.WriteString("[], shape=")
		b.WriteString(shapeTuple(a.shape))
		shown = true
	}
	b.WriteByte(',')
	s := b.String()
	dt := "dtype=" + a.dtype.String() + ")"
	if withShape && !shown {
		dt = "shape=" + shapeTuple(a.shape) + ", " + dt
	}
	// Like numpy, move the dtype to its own line if it would overflow the
	// last one.
	if last := len(s) - (strings.LastIndexByte(s, '\n') + 1); last+1+len(dt) > printWidth {
		return s + "\n" + strings.Repeat(" ", len("array(")) + dt
	}
	return s + " " + dt
}

// errorText is what every form of printing shows for an array whose
// evaluation failed.
func errorText(err error) string { return "array(<error: " + err.Error() + ">)" }

// shapeTuple formats a shape as Python prints a tuple: "(2, 0, 3)".
func shapeTuple(shape []int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.Itoa(d)
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// formatData formats the elements of a non-empty evaluated array inside
// their brackets.
func (a *Array) formatData() string {
	d := a.data.Load()
	offs, summarise := a.shownOffsets()
	p := printer{
		shape:     a.shape,
		elems:     formatElements(a.dtype, d.storage.bytes, offs, len(a.shape) == 0),
		summarise: summarise,
		sep:       ", ",
	}
	// numpy leaves room for the "," that precedes the dtype.
	return p.recurse(0, strings.Repeat(" ", len("array(")+1), printWidth-len(","))
}

// shownOffsets returns the storage offsets of the elements of a
// non-empty evaluated array that printing shows, in row-major order, and
// whether the array is summarised (printThreshold).
func (a *Array) shownOffsets() (offs []int, summarise bool) {
	d := a.data.Load()
	summarise = a.size > printThreshold
	if len(a.shape) == 0 {
		return []int{d.offset}, summarise
	}
	var walk func(k, off int)
	walk = func(k, off int) {
		for _, i := range shownIndices(a.shape[k], summarise) {
			o := off + i*d.strides[k]
			if k == len(a.shape)-1 {
				offs = append(offs, o)
			} else {
				walk(k+1, o)
			}
		}
	}
	walk(0, d.offset)
	return offs, summarise
}

// shownIndices returns the indices of an axis of length n that are printed.
func shownIndices(n int, summarise bool) []int {
	if !summarise || n <= 2*printEdge {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	idx := make([]int, 0, 2*printEdge)
	for i := range printEdge {
		idx = append(idx, i)
	}
	for i := n - printEdge; i < n; i++ {
		idx = append(idx, i)
	}
	return idx
}

// printer lays out formatted elements as numpy's _formatArray does.
type printer struct {
	shape     []int
	elems     []string // the shown elements in row-major order
	next      int
	summarise bool
	sep       string // between elements: ", " in repr, " " in str
}

// recurse formats the sub-array at the given axis. hanging is the indent
// of continuation lines; width is the space left for the line.
func (p *printer) recurse(axis int, hanging string, width int) string {
	if axis == len(p.shape) {
		e := p.elems[p.next]
		p.next++
		return e
	}
	nextHanging := hanging + " "
	nextWidth := width - len("]")
	n := p.shape[axis]
	show := p.summarise && n > 2*printEdge
	lead, trail := 0, n
	if show {
		lead, trail = printEdge, printEdge
	}
	var s strings.Builder
	if axis == len(p.shape)-1 {
		elemWidth := width - len("]")
		line := hanging
		for range lead {
			line = extendLine(&s, line, p.recurse(axis+1, nextHanging, nextWidth), elemWidth, hanging)
			line += p.sep
		}
		if show {
			line = extendLine(&s, line, "...", elemWidth, hanging)
			line += p.sep
		}
		for i := trail; i > 1; i-- {
			line = extendLine(&s, line, p.recurse(axis+1, nextHanging, nextWidth), elemWidth, hanging)
			line += p.sep
		}
		line = extendLine(&s, line, p.recurse(axis+1, nextHanging, nextWidth), elemWidth, hanging)
		s.WriteString(line)
	} else {
		sep := strings.TrimRight(p.sep, " ") + strings.Repeat("\n", len(p.shape)-1-axis)
		for range lead {
			s.WriteString(hanging + p.recurse(axis+1, nextHanging, nextWidth) + sep)
		}
		if show {
			s.WriteString(hanging + "..." + sep)
		}
		for i := trail; i > 1; i-- {
			s.WriteString(hanging + p.recurse(axis+1, nextHanging, nextWidth) + sep)
		}
		s.WriteString(hanging + p.recurse(axis+1, nextHanging, nextWidth))
	}
	return "[" + s.String()[len(hanging):] + "]"
}

// extendLine appends word to line, first moving line to s and starting a
// new one at prefix if the word would pass width (unless the line holds
// nothing but the prefix, where wrapping would not help).
func extendLine(s *strings.Builder, line, word string, width int, prefix string) string {
	if len(line)+len(word) > width && len(line) > len(prefix) {
		s.WriteString(strings.TrimRight(line, " "))
		s.WriteByte('\n')
		line = prefix
	}
	return line + word
}

// formatElements formats the elements at the given storage offsets, each
// padded as numpy pads it for this set of elements. scalar is set for a
// 0-d array.
func formatElements(dt DType, mem []byte, offs []int, scalar bool) []string {
	base := unsafe.Pointer(unsafe.SliceData(mem))
	at := func(o int) unsafe.Pointer { return unsafe.Add(base, uintptr(o)*uintptr(dt.Size())) }
	out := make([]string, len(offs))
	switch dt {
	case Bool:
		// numpy pads True to the width of False, except in a 0-d array
		t := " True"
		if scalar {
			t = "True"
		}
		for i, o := range offs {
			out[i] = "False"
			if *(*bool)(at(o)) {
				out[i] = t
			}
		}
	case Uint8, Uint16, Uint32, Uint64, Int8, Int16, Int32, Int64:
		width := 0
		for i, o := range offs {
			switch dt {
			case Uint8:
				out[i] = strconv.FormatUint(uint64(*(*uint8)(at(o))), 10)
			case Uint16:
				out[i] = strconv.FormatUint(uint64(*(*uint16)(at(o))), 10)
			case Uint32:
				out[i] = strconv.FormatUint(uint64(*(*uint32)(at(o))), 10)
			case Uint64:
				out[i] = strconv.FormatUint(*(*uint64)(at(o)), 10)
			case Int8:
				out[i] = strconv.FormatInt(int64(*(*int8)(at(o))), 10)
			case Int16:
				out[i] = strconv.FormatInt(int64(*(*int16)(at(o))), 10)
			case Int32:
				out[i] = strconv.FormatInt(int64(*(*int32)(at(o))), 10)
			default:
				out[i] = strconv.FormatInt(*(*int64)(at(o)), 10)
			}
			width = max(width, len(out[i]))
		}
		for i, s := range out {
			out[i] = strings.Repeat(" ", width-len(s)) + s
		}
	case Complex64:
		re := make([]float64, len(offs))
		im := make([]float64, len(offs))
		for i, o := range offs {
			c := *(*complex64)(at(o))
			re[i], im[i] = float64(real(c)), float64(imag(c))
		}
		rf := newFloatFormat(re, Float32, false)
		imf := newFloatFormat(im, Float32, true)
		for i := range offs {
			s := imf.format(im[i])
			// the j goes before the padding
			t := strings.TrimRight(s, " ")
			out[i] = rf.format(re[i]) + t + "j" + s[len(t):]
		}
	default:
		vals := make([]float64, len(offs))
		for i, o := range offs {
			switch dt {
			case Float16:
				vals[i] = float64((*(*F16)(at(o))).Float32())
			case BFloat16:
				vals[i] = float64((*(*BF16)(at(o))).Float32())
			case Float32:
				vals[i] = float64(*(*float32)(at(o)))
			default:
				vals[i] = *(*float64)(at(o))
			}
		}
		f := newFloatFormat(vals, dt, false)
		for i, v := range vals {
			out[i] = f.format(v)
		}
	}
	return out
}

// floatFormat is numpy's FloatingFormat in its default "maxprec" mode: the
// layout chosen for one set of values, which every value is then padded
// to.
type floatFormat struct {
	dt       DType // the values' precision: which digits are shortest
	plus     bool  // print + on non-negative values (imaginary parts)
	sci      bool  // scientific notation
	padLeft  int   // characters before the point, sign included
	padRight int   // characters after the point (all of them, in sci)
	frac     int   // sci: digits after the point, zero-padded
	expSize  int   // sci: digits of the exponent, zero-padded
}

func newFloatFormat(vals []float64, dt DType, plus bool) *floatFormat {
	f := &floatFormat{dt: dt, plus: plus}
	var finite []float64
	hasNegInf := false
	for _, v := range vals {
		switch {
		case math.IsInf(v, -1):
			hasNegInf = true
		case !math.IsInf(v, 0) && !math.IsNaN(v):
			finite = append(finite, v)
		}
	}
	lo, hi := math.Inf(1), 0.0
	for _, v := range finite {
		if v != 0 {
			lo, hi = min(lo, math.Abs(v)), max(hi, math.Abs(v))
		}
	}
	if hi > 0 {
		f.sci = hi >= 1e8 || lo < 1e-4 || f.ratio(hi, lo) > 1000
	}
	for _, v := range finite {
		d := f.digits(v, false)
		if f.sci {
			f.padLeft = max(f.padLeft, len(f.signOf(v))+1)
			f.frac = max(f.frac, len(d.digits)-1)
			f.expSize = max(f.expSize, len(strconv.Itoa(absInt(d.exp))), 2)
		} else {
			ip, fp := d.positional()
			f.padLeft = max(f.padLeft, len(f.signOf(v))+len(ip))
			f.padRight = max(f.padRight, len(fp))
		}
	}
	if f.sci {
		f.padRight = f.expSize + 2 + f.frac
	}
	if len(finite) < len(vals) {
		// room for nan and inf, whose text ends where the numbers end
		infLen := 3
		if plus || hasNegInf {
			infLen++
		}
		f.padLeft = max(f.padLeft, 3-(f.padRight+1), infLen-(f.padRight+1))
	}
	return f
}

func absInt(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// ratio computes hi/lo rounded to the values' own precision, as numpy
// does when it decides between positional and scientific notation.
func (f *floatFormat) ratio(hi, lo float64) float64 {
	switch f.dt {
	case Float64:
		return hi / lo
	case Float16:
		return float64(NewF16(float32(hi) / float32(lo)).Float32())
	case BFloat16:
		return float64(NewBF16(float32(hi) / float32(lo)).Float32())
	}
	return float64(float32(hi) / float32(lo))
}

func (f *floatFormat) signOf(v float64) string {
	switch {
	case math.Signbit(v):
		return "-"
	case f.plus:
		return "+"
	}
	return ""
}

// digits returns the decimal digits of finite v: the shortest that
// identify it, cut to printPrecision digits after the point (of the
// mantissa, in scientific notation). When padded is set, as in numpy's
// final pass, Dragon4 is also asked for a minimum of digits, which it
// takes from v's exact value: down to the units in positional notation
// (float32 99999992 prints as 99999992., not 99999990.), and f.frac
// digits after the point in scientific notation.
func (f *floatFormat) digits(v float64, padded bool) decimal {
	d := shortest(v, f.dt)
	if f.sci {
		switch n := len(d.digits) - 1; {
		case n > printPrecision:
			d = parseDecimal(strconv.FormatFloat(v, 'e', printPrecision, 64))
		case padded && n < f.frac:
			d = parseDecimal(strconv.FormatFloat(v, 'e', f.frac, 64))
		}
		return d
	}
	switch n := len(d.digits) - 1 - d.exp; {
	case n > printPrecision:
		d = parseDecimal(strconv.FormatFloat(v, 'f', printPrecision, 64))
	case padded && n < 0:
		d = parseDecimal(strconv.FormatFloat(v, 'f', 0, 64))
	}
	return d
}

func (f *floatFormat) format(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		s := "nan"
		if math.IsInf(v, 0) {
			s = "inf"
			if v < 0 {
				s = "-inf"
			}
		}
		if f.plus && s[0] != '-' {
			s = "+" + s
		}
		return strings.Repeat(" ", max(f.padLeft+f.padRight+1-len(s), 0)) + s
	}
	d := f.digits(v, true)
	var s string
	if f.sci {
		e := strconv.Itoa(absInt(d.exp))
		e = strings.Repeat("0", max(f.expSize-len(e), 0)) + e
		es := "+"
		if d.exp < 0 {
			es = "-"
		}
		frac := d.digits[1:] + strings.Repeat("0", f.frac-(len(d.digits)-1))
		s = f.signOf(v) + d.digits[:1] + "." + frac + "e" + es + e
		return strings.Repeat(" ", max(f.padLeft-len(f.signOf(v))-1, 0)) + s
	}
	ip, fp := d.positional()
	s = f.signOf(v) + ip
	return strings.Repeat(" ", max(f.padLeft-len(s), 0)) + s + "." + fp + strings.Repeat(" ", f.padRight-len(fp))
}

// decimal is a non-negative decimal number digits[0].digits[1:] × 10^exp
// with no trailing zeros in digits (zero is "0", exponent 0).
type decimal struct {
	digits string
	exp    int
}

// positional splits d into the digits before and after the point.
func (d decimal) positional() (intPart, fracPart string) {
	if d.exp < 0 {
		return "0", strings.Repeat("0", -d.exp-1) + d.digits
	}
	if len(d.digits) <= d.exp+1 {
		return d.digits + strings.Repeat("0", d.exp+1-len(d.digits)), ""
	}
	return d.digits[:d.exp+1], d.digits[d.exp+1:]
}

// parseDecimal reads strconv's 'e' or 'f' output, ignoring the sign.
func parseDecimal(s string) decimal {
	s = strings.TrimLeft(s, "+-")
	exp := 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		exp, _ = strconv.Atoi(s[i+1:])
		s = s[:i]
	}
	ip, fp, _ := strings.Cut(s, ".")
	digits := ip + fp
	exp += len(ip) - 1
	for len(digits) > 1 && digits[0] == '0' {
		digits = digits[1:]
		exp--
	}
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		return decimal{digits: "0"}
	}
	return decimal{digits: digits, exp: exp}
}

// shortest returns the shortest decimal that rounds to |v| in dtype dt,
// the closest one if there are several. Like numpy's Dragon4 (and Go's
// strconv), a decimal exactly halfway to a neighbour counts when v's last
// mantissa bit is even, since round-to-even would read it back as v.
func shortest(v float64, dt DType) decimal {
	v = math.Abs(v)
	if v == 0 {
		return decimal{digits: "0"}
	}
	switch dt {
	case Float64:
		return parseDecimal(strconv.FormatFloat(v, 'e', -1, 64))
	case Float16:
		h := NewF16(float32(v))
		return shortestSmall(v, float64(F16(h-1).Float32()), float64(F16(h+1).Float32()), h&1 == 0, h == 0x7bff)
	case BFloat16:
		b := NewBF16(float32(v))
		return shortestSmall(v, float64(BF16(b-1).Float32()), float64(BF16(b+1).Float32()), b&1 == 0, b == 0x7f7f)
	}
	return parseDecimal(strconv.FormatFloat(v, 'e', -1, 32))
}

// shortestSmall finds the shortest decimal for a positive value of a
// 16-bit format (which strconv does not know), given its neighbours below
// and above; atMax says the one above is infinity, so the gap above is
// taken to match the gap below. For growing p it tries the two p-digit
// decimals either side of v, as Dragon4 does, comparing them exactly with
// the halfway points.
func shortestSmall(v, down, up float64, even, atMax bool) decimal {
	if atMax {
		up = v + (v - down)
	}
	var lo, hi, c big.Rat
	lo.SetFloat64((v + down) / 2) // exact: these formats have few bits
	hi.SetFloat64((v + up) / 2)
	inside := func(d decimal) bool {
		c.SetString(d.digits[:1] + "." + d.digits[1:] + "e" + strconv.Itoa(d.exp))
		a, b := lo.Cmp(&c), c.Cmp(&hi)
		return (a < 0 || even && a == 0) && (b < 0 || even && b == 0)
	}
	// every digit of v: a float64 has at most 767 significant ones
	exact := parseDecimal(strconv.FormatFloat(v, 'e', 767, 64))
	for p := 1; p < len(exact.digits); p++ {
		t := decimal{digits: exact.digits[:p], exp: exact.exp}
		u := t.up()
		rest := exact.digits[p:] // non-empty, and its last digit is not 0
		nearerUp := rest[0] > '5' || rest[0] == '5' && (len(rest) > 1 || (t.digits[p-1]-'0')%2 == 1)
		tIn, uIn := inside(t), inside(u)
		switch {
		case tIn && uIn && nearerUp, uIn && !tIn:
			return u.trim()
		case tIn:
			return t.trim()
		}
	}
	return exact
}

// up returns d plus one unit in its last digit.
func (d decimal) up() decimal {
	b := []byte(d.digits)
	i := len(b) - 1
	for ; i >= 0 && b[i] == '9'; i-- {
		b[i] = '0'
	}
	if i < 0 {
		return decimal{digits: "1" + string(b), exp: d.exp + 1}
	}
	b[i]++
	return decimal{digits: string(b), exp: d.exp}
}

// trim drops trailing zeros from d's digits.
func (d decimal) trim() decimal {
	if t := strings.TrimRight(d.digits, "0"); t != "" {
		d.digits = t
	}
	return d
}
