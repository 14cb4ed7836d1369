package tensorio

import (
	"encoding/binary"
	"io"
	"math/bits"

	"github.com/fathom-go/fathom/array"
)

// LittleEndian reports whether the host, and so fathom's storage, keeps
// numbers little-endian.
var LittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// Swap reverses the byte order of each word of b (words of size bytes).
func Swap(b []byte, size int) {
	switch size {
	case 2:
		for i := 0; i+1 < len(b); i += 2 {
			binary.LittleEndian.PutUint16(b[i:], bits.ReverseBytes16(binary.LittleEndian.Uint16(b[i:])))
		}
	case 4:
		for i := 0; i+3 < len(b); i += 4 {
			binary.LittleEndian.PutUint32(b[i:], bits.ReverseBytes32(binary.LittleEndian.Uint32(b[i:])))
		}
	case 8:
		for i := 0; i+7 < len(b); i += 8 {
			binary.LittleEndian.PutUint64(b[i:], bits.ReverseBytes64(binary.LittleEndian.Uint64(b[i:])))
		}
	}
}

// Fix makes bytes read from a file into fathom's form for kind k: host
// byte order (swapping when the file's order, little or not, differs),
// and booleans as 0 or 1 (a file may hold any nonzero byte for true;
// fathom's kernels assume 1).
func Fix(k Kind, b []byte, little bool) {
	if little != LittleEndian && k.WordSize() > 1 {
		Swap(b, k.WordSize())
	}
	if k.DType == array.Bool {
		for i, v := range b {
			if v > 1 {
				b[i] = 1
			}
		}
	}
}

// chunk is the size of the buffer that strided arrays are gathered into,
// and byte-swapped data staged in, on the way to a writer.
const chunk = 1 << 20

// Layout says how an evaluated array's elements lie in its storage.
type Layout int

const (
	// Strided: neither order is contiguous; writing gathers.
	Strided Layout = iota
	// RowMajor: contiguous in C order.
	RowMajor
	// ColumnMajor: contiguous in Fortran order, and not in C order.
	ColumnMajor
)

// LayoutOf returns the layout of evaluated a.
func LayoutOf(a *array.Array) Layout {
	if a.RowMajor() {
		return RowMajor
	}
	shape, strides := a.Shape(), a.Strides()
	s := 1
	for i, d := range shape {
		if d == 0 {
			return RowMajor
		}
		if d != 1 && strides[i] != s {
			return Strided
		}
		s *= d
	}
	return ColumnMajor
}

// contiguous returns the bytes of evaluated a, which must be RowMajor or
// ColumnMajor: the elements in that order.
func contiguous(a *array.Array) []byte {
	es := a.DType().Size()
	b := a.Storage().Bytes()
	lo := a.Offset() * es
	return b[lo : lo+a.NBytes()]
}

// WriteArray writes the elements of evaluated a to w, in row-major order,
// or in column-major order when a's layout is ColumnMajor and columnMajor
// is set, as little-endian numbers if little (else big-endian).
// Contiguous arrays in host order are written straight from their
// storage; others go through a 1 MiB buffer.
func WriteArray(w io.Writer, a *array.Array, little, columnMajor bool) error {
	if a.Size() == 0 {
		return nil
	}
	k, _ := FromDType(a.DType())
	swap := little != LittleEndian && k.WordSize() > 1
	layout := LayoutOf(a)
	if layout == RowMajor || layout == ColumnMajor && columnMajor {
		b := contiguous(a)
		if !swap {
			_, err := w.Write(b)
			return err
		}
		buf := make([]byte, min(chunk, len(b)))
		for len(b) > 0 {
			n := copy(buf, b)
			Swap(buf[:n], k.WordSize())
			if _, err := w.Write(buf[:n]); err != nil {
				return err
			}
			b = b[n:]
		}
		return nil
	}
	return gather(w, a, k, swap)
}

// gather writes a strided array in row-major order: runs along the last
// axis are copied whole when that axis is contiguous, else one element at
// a time, into a buffer that is flushed when full.
func gather(w io.Writer, a *array.Array, k Kind, swap bool) error {
	es := k.Size()
	shape, strides := a.Shape(), a.Strides()
	src := a.Storage().Bytes()
	nd := len(shape)
	// One run is the last axis (the whole array when 0-d).
	runLen, runStride := 1, 1
	if nd > 0 {
		runLen, runStride = shape[nd-1], strides[nd-1]
	}
	buf := make([]byte, 0, min(chunk, max(a.NBytes(), es)))
	flush := func() error {
		if swap {
			Swap(buf, k.WordSize())
		}
		_, err := w.Write(buf)
		buf = buf[:0]
		return err
	}
	idx := make([]int, max(nd-1, 0))
	off := a.Offset()
	for {
		// copy the run starting at element offset off
		if runStride == 1 {
			rb := src[off*es : (off+runLen)*es]
			for len(rb) > 0 {
				if len(buf) == cap(buf) {
					if err := flush(); err != nil {
						return err
					}
				}
				n := min(len(rb), cap(buf)-len(buf))
				buf = append(buf, rb[:n]...)
				rb = rb[n:]
			}
		} else {
			o := off
			for range runLen {
				if cap(buf)-len(buf) < es {
					if err := flush(); err != nil {
						return err
					}
				}
				buf = append(buf, src[o*es:(o+1)*es]...)
				o += runStride
			}
		}
		// advance the leading axes, last first
		j := nd - 2
		for ; j >= 0; j-- {
			idx[j]++
			off += strides[j]
			if idx[j] < shape[j] {
				break
			}
			off -= idx[j] * strides[j]
			idx[j] = 0
		}
		if j < 0 {
			break
		}
	}
	if len(buf) > 0 {
		return flush()
	}
	return nil
}

// ColumnMajorStrides returns the element strides of a column-major
// (Fortran order) array of the given shape.
func ColumnMajorStrides(shape []int) []int {
	st := make([]int, len(shape))
	s := 1
	for i, d := range shape {
		st[i] = s
		s *= max(d, 1)
	}
	return st
}
