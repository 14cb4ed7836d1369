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
		var scratch radixScratch
		return func(offs []int) {
			a, b := offs[0], offs[1]
			for j := range keys {
				keys[j] = kk.key(s[b+j*si])
			}
			sortKeys(keys, &scratch)
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

// radixMin is the line length from which float lines sort by radix: its
// few linear passes beat pdqsort's comparisons, which test for NaN, on
// long lines (docs/performance.md).
const radixMin = 1 << 12

// radixScratch holds a worker's buffers for radixSort.
type radixScratch struct {
	u32 [2][]uint32
	u64 [2][]uint64
	pos [2][]int32
}

// grow returns b resliced to n, reallocated if it is too short.
func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// sortKeys sorts keys ascending: NaNs first for pdqsort (slices.Sort),
// last for the radix sort of long float lines; the callers place NaNs by
// leadingNaNs, which finds none in the latter.
func sortKeys[K sortKey](keys []K, sc *radixScratch) {
	if len(keys) < radixMin {
		slices.Sort(keys)
		return
	}
	switch k := any(keys).(type) {
	case []float32:
		sortFloat32(k, sc)
	case []float64:
		sortFloat64(k, sc)
	default:
		slices.Sort(keys)
	}
}

// sortFloat32 sorts by floatOrder32's keys; NaNs come back as one quiet
// NaN, after +Inf.
func sortFloat32(keys []float32, sc *radixScratch) {
	n := len(keys)
	for i := range sc.u32 {
		sc.u32[i] = grow(sc.u32[i], n)
	}
	u := sc.u32[0]
	for i, x := range keys {
		u[i] = floatOrder32(x, false)
	}
	u = radixSort(u, sc.u32[1], 32)
	for i, b := range u {
		if b>>31 != 0 {
			b &^= 1 << 31
		} else {
			b = ^b
		}
		keys[i] = math.Float32frombits(b)
	}
}

// sortFloat64 is sortFloat32 for float64 keys.
func sortFloat64(keys []float64, sc *radixScratch) {
	n := len(keys)
	for i := range sc.u64 {
		sc.u64[i] = grow(sc.u64[i], n)
	}
	u := sc.u64[0]
	for i, x := range keys {
		u[i] = floatOrder64(x, false)
	}
	u = radixSort(u, sc.u64[1], 64)
	for i, b := range u {
		if b>>63 != 0 {
			b &^= 1 << 63
		} else {
			b = ^b
		}
		keys[i] = math.Float64frombits(b)
	}
}

// radixDigit is the width of one radix pass: 2^11 counters stay in L1.
const radixDigit = 11

// radixSort sorts src (width bits per key) by least significant digit
// first, using tmp (as long) for the passes, and returns whichever of the
// two holds the result. A pass whose digit is the same in every key is
// skipped.
func radixSort[U uint32 | uint64](src, tmp []U, width int) []U {
	var count [1 << radixDigit]int
	for shift := 0; shift < width; shift += radixDigit {
		if !radixStarts(src, shift, &count) {
			continue
		}
		for _, b := range src {
			d := (b >> shift) & (1<<radixDigit - 1)
			tmp[count[d]] = b
			count[d]++
		}
		src, tmp = tmp, src
	}
	return src
}

// radixStarts sets count[d] to where the keys of src whose digit at
// shift is d start in the pass's output, and reports whether the pass
// moves anything: it does not when every key has the same digit.
func radixStarts[U uint32 | uint64](src []U, shift int, count *[1 << radixDigit]int) bool {
	clear(count[:])
	for _, b := range src {
		count[(b>>shift)&(1<<radixDigit-1)]++
	}
	if count[(src[0]>>shift)&(1<<radixDigit-1)] == len(src) {
		return false
	}
	sum := 0
	for i, c := range count {
		count[i] = sum
		sum += c
	}
	return true
}

// floatOrder32 and floatOrder64 map a float's bits to a key whose
// unsigned order is Sort's: negative numbers inverted, positive ones
// with the sign bit set, every NaN the largest key. ArgSort's keys also
// make -0 equal to 0, so that a stable sort keeps zeros in their order.
func floatOrder32(x float32, zeros bool) uint32 {
	b := math.Float32bits(x)
	switch {
	case x != x:
		return math.MaxUint32
	case zeros && x == 0:
		return 1 << 31
	case b>>31 != 0:
		return ^b
	}
	return b | 1<<31
}

func floatOrder64(x float64, zeros bool) uint64 {
	b := math.Float64bits(x)
	switch {
	case x != x:
		return math.MaxUint64
	case zeros && x == 0:
		return 1 << 63
	case b>>63 != 0:
		return ^b
	}
	return b | 1<<63
}

// radixPositions sorts the positions of float keys stably by radix, as
// ArgSort's comparison sort orders them (NaNs last, in their order), and
// reports whether it could: other key types return false.
func radixPositions[K sortKey](pairs []keyPos[K], sc *radixScratch) bool {
	switch any(pairs).(type) {
	case []keyPos[float32], []keyPos[float64]:
	default:
		return false
	}
	n := len(pairs)
	for i := range sc.pos {
		sc.pos[i] = grow(sc.pos[i], n)
	}
	pos := sc.pos[0]
	switch p := any(pairs).(type) {
	case []keyPos[float32]:
		for i := range sc.u32 {
			sc.u32[i] = grow(sc.u32[i], n)
		}
		for i, kp := range p {
			sc.u32[0][i], pos[i] = floatOrder32(kp.k, true), kp.i
		}
		_, pos = radixSortPositions(sc.u32[0], sc.u32[1], pos, sc.pos[1], 32)
	case []keyPos[float64]:
		for i := range sc.u64 {
			sc.u64[i] = grow(sc.u64[i], n)
		}
		for i, kp := range p {
			sc.u64[0][i], pos[i] = floatOrder64(kp.k, true), kp.i
		}
		_, pos = radixSortPositions(sc.u64[0], sc.u64[1], pos, sc.pos[1], 64)
	}
	for i, j := range pos {
		pairs[i].i = j
	}
	return true
}

// radixSortPositions is radixSort carrying each key's position along;
// counting sorts are stable, so equal keys keep their positions' order.
func radixSortPositions[U uint32 | uint64](src, tmp []U, pos, ptmp []int32, width int) ([]U, []int32) {
	var count [1 << radixDigit]int
	for shift := 0; shift < width; shift += radixDigit {
		if !radixStarts(src, shift, &count) {
			continue
		}
		for i, b := range src {
			d := (b >> shift) & (1<<radixDigit - 1)
			tmp[count[d]], ptmp[count[d]] = b, pos[i]
			count[d]++
		}
		src, tmp = tmp, src
		pos, ptmp = ptmp, pos
	}
	return src, pos
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
		var scratch radixScratch
		return func(offs []int) {
			a, b := offs[0], offs[1]
			for j := range pairs {
				pairs[j] = keyPos[K]{kk.key(s[b+j*si]), int32(j)}
			}
			// Long float lines take the stable radix sort; the rest
			// pdqsort with ties broken by position, which is faster than
			// a merge-based stable sort.
			if n < radixMin || !radixPositions(pairs, &scratch) {
				slices.SortFunc(pairs, func(x, y keyPos[K]) int {
					if c := cmpNaNLast(x.k, y.k); c != 0 {
						return c
					}
					return cmp.Compare(x.i, y.i)
				})
			}
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
