package cpu

import (
	"cmp"
	"math"
	"slices"

	"github.com/fathom-go/fathom/array"
)

// sortKey is a type the sorts compare: each dtype's elements are sorted
// as one of these (float16 and bfloat16 as float32, bool as uint8).
type sortKey interface {
	ewInt | float32 | float64
}

func isNaNKey[K sortKey](x K) bool { return x != x }

// cmpNaNLast orders keys ascending with NaNs after every number, as numpy
// sorts.
func cmpNaNLast[K sortKey](a, b K) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	an, bn := isNaNKey(a), isNaNKey(b)
	switch {
	case an == bn:
		return 0
	case an:
		return 1
	}
	return -1
}

// lessNaNLast is cmpNaNLast(a, b) < 0.
func lessNaNLast[K sortKey](a, b K) bool { return a < b || (!isNaNKey(a) && isNaNKey(b)) }

// leadingNaNs counts the NaNs at the start of keys sorted by slices.Sort,
// which puts them first (cmp.Less); numpy puts them last.
func leadingNaNs[K sortKey](keys []K) int {
	n := 0
	for n < len(keys) && isNaNKey(keys[n]) {
		n++
	}
	return n
}

// lineSorter runs the sorting kernels for one dtype.
type lineSorter interface {
	sort(out, in Buf, axis int)
	argsort(out, in Buf, axis int)
	topk(out, in Buf, axis, k int)
}

// keyed sorts elements of Go type E by their keys of type K.
type keyed[E any, K sortKey] struct {
	key  func(E) K
	elem func(K) E
}

func keySame[T any](v T) T { return v }

func sorterFor(dt array.DType) (lineSorter, bool) {
	switch dt {
	case array.Bool:
		return keyed[bool, uint8]{
			key: func(v bool) uint8 {
				if v {
					return 1
				}
				return 0
			},
			elem: func(k uint8) bool { return k != 0 },
		}, true
	case array.Uint8:
		return keyed[uint8, uint8]{keySame[uint8], keySame[uint8]}, true
	case array.Int32:
		return keyed[int32, int32]{keySame[int32], keySame[int32]}, true
	case array.Int64:
		return keyed[int64, int64]{keySame[int64], keySame[int64]}, true
	case array.Int8:
		return keyed[int8, int8]{keySame[int8], keySame[int8]}, true
	case array.Int16:
		return keyed[int16, int16]{keySame[int16], keySame[int16]}, true
	case array.Uint16:
		return keyed[uint16, uint16]{keySame[uint16], keySame[uint16]}, true
	case array.Uint32:
		return keyed[uint32, uint32]{keySame[uint32], keySame[uint32]}, true
	case array.Uint64:
		return keyed[uint64, uint64]{keySame[uint64], keySame[uint64]}, true
	case array.Float16:
		return keyed[array.F16, float32]{array.F16.Float32, array.NewF16}, true
	case array.BFloat16:
		return keyed[array.BF16, float32]{array.BF16.Float32, array.NewBF16}, true
	case array.Float32:
		return keyed[float32, float32]{keySame[float32], keySame[float32]}, true
	case array.Float64:
		return keyed[float64, float64]{keySame[float64], keySame[float64]}, true
	}
	return nil, false
}

func checkSort(op string, in Buf) (lineSorter, error) {
	s, ok := sorterFor(in.DType)
	if !ok {
		return nil, array.Errorf(op, "dtype %v cannot be sorted", in.DType)
	}
	return s, nil
}

// Sort writes in sorted ascending along axis into out (same shape and
// dtype). NaNs go last, as in numpy. Every real dtype and bool sort.
func Sort(out, in Buf, axis int) error {
	s, err := checkSort("cpu.Sort", in)
	if err != nil {
		return err
	}
	if out.DType != in.DType {
		return array.Errorf("cpu.Sort", "out dtype %v differs from in's %v", out.DType, in.DType)
	}
	if in.Size() > 0 {
		s.sort(out, in, axis)
	}
	return nil
}

// ArgSort writes into out (Int32, in's shape) the positions that sort in
// along axis. The sort is stable: equal elements keep their order, and
// NaNs come last in their original order (numpy's kind="stable").
func ArgSort(out, in Buf, axis int) error {
	s, err := checkSort("cpu.ArgSort", in)
	if err != nil {
		return err
	}
	if out.DType != array.Int32 {
		return array.Errorf("cpu.ArgSort", "out dtype %v is not int32", out.DType)
	}
	if in.Shape[axis] > math.MaxInt32 {
		return array.Errorf("cpu.ArgSort", "axis %d of size %d does not fit int32 positions", axis, in.Shape[axis])
	}
	if in.Size() > 0 {
		s.argsort(out, in, axis)
	}
	return nil
}

// TopK writes into out the k largest elements of in along axis, largest
// first; out has in's shape with k along axis. NaNs count as larger than
// every number (they sort last ascending). Small k selects with a heap of
// k elements instead of sorting each line.
func TopK(out, in Buf, axis, k int) error {
	s, err := checkSort("cpu.TopK", in)
	if err != nil {
		return err
	}
	if out.DType != in.DType {
		return array.Errorf("cpu.TopK", "out dtype %v differs from in's %v", out.DType, in.DType)
	}
	if out.Size() > 0 {
		s.topk(out, in, axis, k)
	}
	return nil
}

func (kk keyed[E, K]) sort(out, in Buf, axis int) {
	n := in.Shape[axis]
	o, s := elems[E](out), elems[E](in)
	so, si := out.Strides[axis], in.Strides[axis]
	forLines(in.Shape, axis, n, []Buf{out, in}, func() func([]int) {
		keys := make([]K, n)
		return func(offs []int) {
			a, b := offs[0], offs[1]
			for j := range keys {
				keys[j] = kk.key(s[b+j*si])
			}
			slices.Sort(keys)
			nan := leadingNaNs(keys)
			j := a
			for _, x := range keys[nan:] {
				o[j] = kk.elem(x)
				j += so
			}
			for _, x := range keys[:nan] {
				o[j] = kk.elem(x)
				j += so
			}
		}
	})
}

type keyPos[K sortKey] struct {
	k K
	i int32
}

func (kk keyed[E, K]) argsort(out, in Buf, axis int) {
	n := in.Shape[axis]
	o, s := elems[int32](out), elems[E](in)
	so, si := out.Strides[axis], in.Strides[axis]
	forLines(in.Shape, axis, n, []Buf{out, in}, func() func([]int) {
		pairs := make([]keyPos[K], n)
		return func(offs []int) {
			a, b := offs[0], offs[1]
			for j := range pairs {
				pairs[j] = keyPos[K]{kk.key(s[b+j*si]), int32(j)}
			}
			// Ties broken by position: a stable order from pdqsort,
			// which is faster than a merge-based stable sort.
			slices.SortFunc(pairs, func(x, y keyPos[K]) int {
				if c := cmpNaNLast(x.k, y.k); c != 0 {
					return c
				}
				return cmp.Compare(x.i, y.i)
			})
			for j, p := range pairs {
				o[a+j*so] = p.i
			}
		}
	})
}

func (kk keyed[E, K]) topk(out, in Buf, axis, k int) {
	n := in.Shape[axis]
	o, s := elems[E](out), elems[E](in)
	so, si := out.Strides[axis], in.Strides[axis]
	// A heap of the k largest costs about n comparisons with its minimum
	// when k is small; for k near n, sorting the line is as cheap.
	useHeap := k*4 <= n
	forLines(in.Shape, axis, n, []Buf{out, in}, func() func([]int) {
		keys := make([]K, 0, n)
		return func(offs []int) {
			a, b := offs[0], offs[1]
			keys = keys[:0]
			if useHeap {
				for j := 0; j < n; j++ {
					x := kk.key(s[b+j*si])
					if len(keys) < k {
						keys = append(keys, x)
						heapUp(keys, len(keys)-1)
					} else if lessNaNLast(keys[0], x) {
						keys[0] = x
						heapDown(keys, 0)
					}
				}
			} else {
				for j := 0; j < n; j++ {
					keys = append(keys, kk.key(s[b+j*si]))
				}
			}
			slices.Sort(keys)
			// Largest first: NaNs (which slices.Sort put first), then
			// the numbers from the top down.
			nan := leadingNaNs(keys)
			j := 0
			for ; j < k && j < nan; j++ {
				o[a+j*so] = kk.elem(keys[j])
			}
			for i := len(keys) - 1; j < k; i, j = i-1, j+1 {
				o[a+j*so] = kk.elem(keys[i])
			}
		}
	})
}

// heapUp and heapDown keep h a min-heap under lessNaNLast.
func heapUp[K sortKey](h []K, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !lessNaNLast(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func heapDown[K sortKey](h []K, i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && lessNaNLast(h[r], h[l]) {
			m = r
		}
		if !lessNaNLast(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
