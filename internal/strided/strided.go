// Package strided computes the strides of strided arrays: row-major
// strides, numpy's broadcast strides, and a walk over every element's
// storage offset. Package array and the kernels share it.
package strided

import "slices"

// RowMajor returns the element strides of a row-major (C order)
// array of the given shape.
func RowMajor(shape []int) []int {
	st := make([]int, len(shape))
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = s
		s *= max(shape[i], 1)
	}
	return st
}

// ForEachOffset calls f with the storage offset of each element of a
// strided array, in row-major order.
func ForEachOffset(shape, strides []int, offset int, f func(off int)) {
	if slices.Contains(shape, 0) {
		return
	}
	nd := len(shape)
	if nd == 0 {
		f(offset)
		return
	}
	idx := make([]int, nd)
	off := offset
	last := nd - 1
	for {
		for j := 0; j < shape[last]; j++ {
			f(off + j*strides[last])
		}
		k := last - 1
		for ; k >= 0; k-- {
			idx[k]++
			off += strides[k]
			if idx[k] < shape[k] {
				break
			}
			off -= idx[k] * strides[k]
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

// Broadcast returns the strides that view an array of the given
// shape and strides as an array of shape to, by numpy's rule: axes align
// at the end, and an axis of size 1 or a missing one repeats with stride
// 0. ok is false when the shapes do not broadcast.
func Broadcast(shape, strides, to []int) (out []int, ok bool) {
	if len(shape) > len(to) {
		return nil, false
	}
	out = make([]int, len(to))
	off := len(to) - len(shape)
	for i, d := range shape {
		switch d {
		case to[off+i]:
			if d != 1 {
				out[off+i] = strides[i]
			}
		case 1:
		default:
			return nil, false
		}
	}
	return out, true
}
