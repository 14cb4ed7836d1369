package array

import (
	"math"
	"strconv"
	"strings"
	"unsafe"
)

// Printing follows numpy: nested brackets aligned under "array(", every
// element padded to one width, and arrays of more than printThreshold
// elements summarised with "..." keeping printEdge items at each end of
// every axis. Unlike numpy, and like MLX, the dtype is always shown.
const (
	printThreshold = 1000
	printEdge      = 3
)

// String evaluates the array and formats it like numpy and MLX:
// "array([[1, 2],\n       [3, 4]], dtype=int32)". An array that cannot be
// evaluated formats as "array(<error: ...>)".
func (a *Array) String() string {
	if err := a.Eval(); err != nil {
		return "array(<error: " + err.Error() + ">)"
	}
	summarise := a.size > printThreshold
	d := a.data.Load()
	elems := a.elementStrings(d, summarise)
	width := 0
	for _, e := range elems {
		width = max(width, len(e))
	}
	var b strings.Builder
	b.WriteString("array(")
	if len(a.shape) == 0 {
		b.WriteString(elems[0])
	} else {
		i := 0
		a.writeAxis(&b, 0, elems, &i, width, summarise, len("array("))
	}
	b.WriteString(", dtype=")
	b.WriteString(a.dtype.String())
	b.WriteString(")")
	return b.String()
}

// shownIndices returns the indices of axis k that are printed, with -1
// standing for the "..." between the two edges.
func shownIndices(n int, summarise bool) []int {
	if !summarise || n <= 2*printEdge {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	idx := []int{}
	for i := 0; i < printEdge; i++ {
		idx = append(idx, i)
	}
	idx = append(idx, -1)
	for i := n - printEdge; i < n; i++ {
		idx = append(idx, i)
	}
	return idx
}

func (a *Array) writeAxis(b *strings.Builder, k int, elems []string, next *int, width int, summarise bool, indent int) {
	b.WriteByte('[')
	idx := shownIndices(a.shape[k], summarise)
	last := k == len(a.shape)-1
	for j, i := range idx {
		if j > 0 {
			b.WriteByte(',')
			if last {
				b.WriteByte(' ')
			} else {
				b.WriteString(strings.Repeat("\n", len(a.shape)-1-k))
				b.WriteString(strings.Repeat(" ", indent+k+1))
			}
		}
		switch {
		case i < 0 && last:
			b.WriteString("...")
		case i < 0:
			b.WriteString("...")
		case last:
			e := elems[*next]
			*next++
			b.WriteString(strings.Repeat(" ", width-len(e)))
			b.WriteString(e)
		default:
			a.writeAxis(b, k+1, elems, next, width, summarise, indent)
		}
	}
	b.WriteByte(']')
}

// elementStrings formats the printed elements in row-major order.
func (a *Array) elementStrings(d *arrayData, summarise bool) []string {
	var offs []int
	if len(a.shape) == 0 {
		offs = []int{d.offset}
	} else {
		var walk func(k, off int)
		walk = func(k, off int) {
			for _, i := range shownIndices(a.shape[k], summarise) {
				if i < 0 {
					continue
				}
				o := off + i*d.strides[k]
				if k == len(a.shape)-1 {
					offs = append(offs, o)
				} else {
					walk(k+1, o)
				}
			}
		}
		walk(0, d.offset)
	}
	base := unsafe.Pointer(unsafe.SliceData(d.storage.bytes))
	es := uintptr(a.dtype.Size())
	out := make([]string, len(offs))
	switch a.dtype {
	case Bool:
		for i, o := range offs {
			if *(*bool)(unsafe.Add(base, uintptr(o)*es)) {
				out[i] = "True"
			} else {
				out[i] = "False"
			}
		}
	case Uint8:
		for i, o := range offs {
			out[i] = strconv.FormatUint(uint64(*(*uint8)(unsafe.Add(base, uintptr(o)*es))), 10)
		}
	case Int32:
		for i, o := range offs {
			out[i] = strconv.FormatInt(int64(*(*int32)(unsafe.Add(base, uintptr(o)*es))), 10)
		}
	case Int64:
		for i, o := range offs {
			out[i] = strconv.FormatInt(*(*int64)(unsafe.Add(base, uintptr(o)*es)), 10)
		}
	case Complex64:
		vals := make([]float64, 0, 2*len(offs))
		for _, o := range offs {
			c := *(*complex64)(unsafe.Add(base, uintptr(o)*es))
			vals = append(vals, float64(real(c)), float64(imag(c)))
		}
		fs := formatFloats(vals, 32)
		for i := range offs {
			im := fs[2*i+1]
			if !strings.HasPrefix(im, "-") {
				im = "+" + im
			}
			out[i] = fs[2*i] + im + "j"
		}
	default:
		vals := make([]float64, len(offs))
		bitsize := 32
		for i, o := range offs {
			p := unsafe.Add(base, uintptr(o)*es)
			switch a.dtype {
			case Float16:
				vals[i] = float64((*(*F16)(p)).Float32())
			case BFloat16:
				vals[i] = float64((*(*BF16)(p)).Float32())
			case Float32:
				vals[i] = float64(*(*float32)(p))
			case Float64:
				vals[i] = *(*float64)(p)
				bitsize = 64
			}
		}
		out = formatFloats(vals, bitsize)
	}
	return out
}

// formatFloats formats floats as numpy does by default: the shortest text
// that reads back to the same value, "1." for integral values, and
// scientific notation for all elements when the finite magnitudes span
// beyond [1e-4, 1e16).
func formatFloats(vals []float64, bitsize int) []string {
	sci := false
	for _, v := range vals {
		if math.IsInf(v, 0) || math.IsNaN(v) || v == 0 {
			continue
		}
		if av := math.Abs(v); av >= 1e16 || av < 1e-4 {
			sci = true
		}
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		switch {
		case math.IsNaN(v):
			out[i] = "nan"
		case math.IsInf(v, 1):
			out[i] = "inf"
		case math.IsInf(v, -1):
			out[i] = "-inf"
		case sci:
			out[i] = strconv.FormatFloat(v, 'e', -1, bitsize)
		default:
			s := strconv.FormatFloat(v, 'f', -1, bitsize)
			if !strings.Contains(s, ".") {
				s += "."
			}
			out[i] = s
		}
	}
	return out
}
