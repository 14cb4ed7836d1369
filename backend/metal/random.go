package metal

import (
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/internal/plan"
	"github.com/fathom-go/fathom/internal/strided"
)

// The random plans: Threefry-2x32 over the counters backend/cpu uses
// (kernels/random.metal), so that a key gives the same bits on both
// devices, and the distributions map them to values with the CPU's steps.

// RandDist is a distribution RandomFloats draws from, as cpu.RandDist.
type RandDist uint8

// The distributions of RandomFloats.
const (
	// RandUniform is cpu.RandUniform: values in [a, b), bit for bit the
	// CPU's.
	RandUniform RandDist = iota
	// RandNormal is cpu.RandNormal (mean a, standard deviation b). The
	// GPU's float32 logarithm and inverse error function differ from the
	// CPU's in the last bits of a few draws.
	RandNormal
)

// Float16's, bfloat16's and float32's largest values below 1 (the
// clamps of cpu.RandomFloats' uniform).
const (
	belowOneF32  = float32(0.99999994)
	belowOneF16  = float32(0.99951171875)
	belowOneBF16 = float32(0.99609375)
)

// RandomBits plans filling out (uint32, uint16 or uint8, row-major) with
// the random bits of each key of keys (uint32, [..., 2]) in turn, every
// key an equal part of out, as cpu.RandomBits.
func RandomBits(out, keys View) ([]Launch, error) {
	const name = "metal.RandomBits"
	per, kl, kv, err := randomKeys(name, out, keys)
	if err != nil || per == 0 {
		return nil, err
	}
	switch out.DType {
	case array.Uint32:
		return append(kl, randomLaunch("random_bits_uint32", out, kv, per)), nil
	case array.Uint16, array.Uint8:
	default:
		return nil, array.Errorf(name, "output dtype %v, want uint32, uint16 or uint8", out.DType)
	}
	bytes := per * out.DType.Size()
	l := randomLaunch("random_bits_"+out.DType.String(), out, kv, (bytes+3)/4)
	l.Params = append(l.Params, packParams([]int64{int64(bytes)})...)
	return append(kl, l), nil
}

// RandomFloats plans filling out (float16, bfloat16 or float32,
// row-major) with draws of dist from each key of keys in turn, one 32-bit
// word per element, as cpu.RandomFloats.
func RandomFloats(out, keys View, dist RandDist, a, b float64) ([]Launch, error) {
	const name = "metal.RandomFloats"
	per, kl, kv, err := randomKeys(name, out, keys)
	if err != nil || per == 0 {
		return nil, err
	}
	if !out.DType.IsFloat() {
		return nil, array.Errorf(name, "output dtype %v is not a float dtype", out.DType)
	}
	round := func(x float32) float32 { return x }
	upper := belowOneF32
	switch out.DType {
	case array.Float16:
		round = func(x float32) float32 { return array.NewF16(x).Float32() }
		upper = belowOneF16
	case array.BFloat16:
		round = func(x float32) float32 { return array.NewBF16(x).Float32() }
		upper = belowOneBF16
	}
	var extra []int64
	bits := func(x float32) int64 { return int64(math.Float32bits(x)) }
	var kernel string
	switch dist {
	case RandUniform:
		kernel = "random_uniform_"
		lo, hi := round(float32(a)), round(float32(b))
		extra = []int64{bits(lo), bits(round(hi - lo)), bits(below(hi, out.DType)), bits(upper)}
	case RandNormal:
		kernel = "random_normal_"
		s := round(float32(math.Sqrt2))
		if b != 1 {
			s = round(s * round(float32(b)))
		}
		loc := round(float32(a))
		// float32 adds loc always (the CPU's float32(s*e) + loc, which
		// turns -0 into +0); the 16-bit floats only when it is not 0
		addLoc := out.DType == array.Float32 || loc != 0
		extra = []int64{bits(s), bits(loc), int64(b2i(addLoc))}
	default:
		return nil, array.Errorf(name, "unknown distribution %d", dist)
	}
	l := randomLaunch(kernel+out.DType.String(), out, kv, per)
	l.Params = append(l.Params, packParams(extra)...)
	return append(kl, l), nil
}

// below returns the largest value of dtype dt below hi (a value of dt).
func below(hi float32, dt array.DType) float32 {
	var to func(float32) uint16
	var from func(uint16) float32
	switch dt {
	case array.Float16:
		to = func(x float32) uint16 { return uint16(array.NewF16(x)) }
		from = func(h uint16) float32 { return array.F16(h).Float32() }
	case array.BFloat16:
		to = func(x float32) uint16 { return uint16(array.NewBF16(x)) }
		from = func(h uint16) float32 { return array.BF16(h).Float32() }
	default:
		return math.Nextafter32(hi, float32(math.Inf(-1)))
	}
	h := to(hi)
	switch {
	case hi > 0:
		h--
	case hi == 0:
		h = 0x8001 // the smallest negative subnormal
	default:
		h++
	}
	return from(h)
}

// Threefry2x32 plans out = JAX's threefry_2x32(key, counts): key is one
// uint32 key ([2]), counts uint32 of out's shape, whose flattened halves
// are the first and second words of the blocks encrypted (an odd count is
// padded with a zero). out is row-major; key and counts may be strided.
func Threefry2x32(out, key, counts View) ([]Launch, error) {
	const name = "metal.Threefry2x32"
	for _, v := range []struct {
		v    View
		what string
	}{{key, "key"}, {counts, "counts"}, {out, "output"}} {
		if err := v.v.check(name, v.what); err != nil {
			return nil, err
		}
		if v.v.DType != array.Uint32 {
			return nil, array.Errorf(name, "%s of dtype %v, want uint32", v.what, v.v.DType)
		}
	}
	if key.Size() != 2 {
		return nil, array.Errorf(name, "key of shape %v, want [2]", key.Shape)
	}
	n := counts.Size()
	if out.Size() != n {
		return nil, array.Errorf(name, "output of shape %v for counts of shape %v", out.Shape, counts.Shape)
	}
	if n == 0 {
		return nil, nil
	}
	if !rowMajor(out) {
		return nil, array.Errorf(name, "output of shape %v and strides %v is not row-major", out.Shape, out.Strides)
	}
	kl, kv, err := contiguous(key, out)
	if err != nil {
		return nil, err
	}
	cl, cv, err := contiguous(counts, out)
	if err != nil {
		return nil, err
	}
	h := (n + 1) / 2
	kArg, _ := bindAt(kv, false)
	cArg, _ := bindAt(cv, false)
	oArg, oOff := bindAt(out, true)
	grid, group := contigGrid(h)
	l := Launch{
		Library: "random.metal", Kernel: "threefry2x32_counts",
		Buffers: []bufArg{kArg, cArg, oArg}, Params: params{}.add(n, h, h, oOff).bytes(),
		Grid: grid, Group: group, Fit: plan.FitThreads,
	}
	return append(append(kl, cl...), l), nil
}

// randomKeys checks the operands of a random plan: keys uint32 [..., 2]
// and out row-major, holding a whole number of equal parts, one for each
// key. It returns the part's size in elements (0: nothing to draw), and
// the keys as one row-major run: keys itself, or a copy in scratch memory
// that the launches returned make.
func randomKeys(name string, out, keys View) (int, []Launch, View, error) {
	if err := keys.check(name, "keys"); err != nil {
		return 0, nil, View{}, err
	}
	if err := out.check(name, "output"); err != nil {
		return 0, nil, View{}, err
	}
	if keys.DType != array.Uint32 || len(keys.Shape) == 0 || keys.Shape[len(keys.Shape)-1] != 2 {
		return 0, nil, View{}, array.Errorf(name, "keys of dtype %v and shape %v, want uint32 [..., 2]", keys.DType, keys.Shape)
	}
	nk, n := keys.Size()/2, out.Size()
	if n == 0 {
		return 0, nil, View{}, nil
	}
	if !rowMajor(out) {
		return 0, nil, View{}, array.Errorf(name, "output of shape %v and strides %v is not row-major", out.Shape, out.Strides)
	}
	if nk == 0 || n%nk != 0 {
		return 0, nil, View{}, array.Errorf(name, "%d elements do not split over %d keys", n, nk)
	}
	kl, kv, err := contiguous(keys, out)
	return n / nk, kl, kv, err
}

// randomLaunch is the launch of kernel over out with w words for each key
// of keys (one row-major run), one thread per pair of words.
func randomLaunch(kernel string, out, keys View, w int) Launch {
	nk := keys.Size() / 2
	kArg, _ := bindAt(keys, false)
	oArg, oOff := bindAt(out, true)
	h := (w + 1) / 2
	grid, group := contigGrid(nk * h)
	return Launch{
		Library: "random.metal", Kernel: kernel, Buffers: []bufArg{kArg, oArg},
		Params: params{}.add(w, h, nk*h, oOff).bytes(),
		Grid:   grid, Group: group, Fit: plan.FitThreads,
	}
}

// contiguous returns v itself when its elements are one row-major run,
// or the launches copying it into scratch memory (allocated near out)
// and the copy's view.
func contiguous(v, out View) ([]Launch, View, error) {
	if rowMajor(v) {
		return nil, v, nil
	}
	mem, err := newScratch(v.Size()*v.DType.Size(), out, v)
	if err != nil {
		return nil, View{}, err
	}
	c := View{Mem: mem, DType: v.DType, Shape: v.Shape, Strides: strided.RowMajor(v.Shape)}
	ls, err := Copy(c, v)
	return ls, c, err
}
