package ops

import (
	"slices"
	"unsafe"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/internal/strided"
)

// The random primitives: counter-based random numbers from Threefry-2x32
// keys (package random builds its distributions on them). A key is a
// uint32 array whose last axis has size 2; an array of keys [k..., 2]
// draws independently for each key, giving [k..., shape...], which is
// also how Vmap over keys batches. The values are functions of the keys
// alone, so they do not depend on the device, the number of cores, or on
// whether the graph runs compiled, and their derivative is zero.

// rngKind is what a random primitive computes.
type rngKind uint8

const (
	rngBits     rngKind = iota // raw bits (uint32, uint16, uint8)
	rngUniform                 // cpu.RandUniform in [A, B)
	rngNormal                  // cpu.RandNormal with loc A and scale B
	rngThreefry                // Threefry2x32(key, counts): input 1 is the counts
)

var rngNames = [...]string{"RandomBits", "RandomUniform", "RandomNormal", "Threefry2x32"}

// randomPrim draws Shape's numbers for every key of its first input.
type randomPrim struct {
	Kind  rngKind
	Shape []int
	DType array.DType
	A, B  float64
}

func (p *randomPrim) Name() string { return rngNames[p.Kind] }

func (p *randomPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}

// keyWords returns the keys of a (uint32, last axis 2) as contiguous
// words.
func keyWords(a *array.Array) []uint32 {
	n := a.Size()
	words := make([]uint32, n)
	if n == 0 {
		return words
	}
	b := bufOf(a)
	dst := cpu.Buf{Data: u32Bytes(words), DType: array.Uint32, Shape: a.Shape(), Strides: strided.RowMajor(a.Shape())}
	if err := cpu.Copy(dst, b); err != nil {
		panic(err) // same shape and dtype: cannot fail
	}
	return words
}

func (p *randomPrim) evalCPU(in, out []*array.Array) error {
	o := alloc(out[0])
	if out[0].Size() == 0 {
		return nil
	}
	keys := keyWords(in[0])
	switch p.Kind {
	case rngBits:
		return cpu.RandomBits(o, keys)
	case rngUniform:
		return cpu.RandomFloats(o, keys, cpu.RandUniform, p.A, p.B)
	case rngNormal:
		return cpu.RandomFloats(o, keys, cpu.RandNormal, p.A, p.B)
	}
	// Threefry2x32: JAX's threefry_2x32 on the flattened counts, whose
	// halves are the two words of each block (an odd count is padded
	// with a zero that is dropped from the result).
	counts := keyWords(in[1])
	n := len(counts)
	h := (n + 1) / 2
	res := make([]uint32, 2*h)
	cpu.ParallelFor(h, 1<<14, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			var x1 uint32
			if h+i < n {
				x1 = counts[h+i]
			}
			res[i], res[h+i] = cpu.Threefry2x32(keys[0], keys[1], counts[i], x1)
		}
	})
	copy(o.Data, u32Bytes(res[:n]))
	return nil
}

// u32Bytes views words as bytes (the CPU buffers' little-endian layout).
func u32Bytes(w []uint32) []byte {
	if len(w) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), 4*len(w))
}

// evalGPU runs the Metal kernels over the counters evalCPU uses, so a key
// gives the CPU's bits and uniform draws on the GPU too (normal draws
// agree to the last bits of float32's logarithm). Float64 draws are the
// CPU's only: Metal has no double.
func (p *randomPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		switch p.Kind {
		case rngBits:
			return metal.RandomBits(o, viewOf(in[0]))
		case rngUniform:
			return metal.RandomFloats(o, viewOf(in[0]), metal.RandUniform, p.A, p.B)
		case rngNormal:
			return metal.RandomFloats(o, viewOf(in[0]), metal.RandNormal, p.A, p.B)
		}
		return metal.Threefry2x32(o, viewOf(in[0]), viewOf(in[1]))
	})
}

// Equivalent reports whether o draws the same numbers (given the same
// inputs).
func (p *randomPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*randomPrim)
	return ok && q.Kind == p.Kind && slices.Equal(q.Shape, p.Shape) && q.DType == p.DType &&
		sameFloat(q.A, p.A) && sameFloat(q.B, p.B)
}

// OutputShapes gives the keys' batch shape followed by the drawn shape.
func (p *randomPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	if p.Kind == rngThreefry {
		return [][]int{in[1].Shape()}, nil
	}
	ks := in[0].Shape()
	if len(ks) == 0 || ks[len(ks)-1] != 2 {
		return nil, array.Errorf("ops."+p.Name(), "keys of shape %v: the last axis must have size 2", ks)
	}
	return [][]int{append(slices.Clone(ks[:len(ks)-1]), p.Shape...)}, nil
}

// VJP: random values are constants of their keys (and counts).
func (p *randomPrim) VJP(inputs, outputs, cots []*array.Array, argnums []int) []*array.Array {
	return make([]*array.Array, len(argnums))
}

// JVP: the tangent of a random value is zero.
func (p *randomPrim) JVP(inputs, outputs, tans []*array.Array, argnums []int) []*array.Array {
	return []*array.Array{nil}
}

// Vmap draws for each key of the batch: the batch axis of the keys moves
// to the front, where the primitive's own key axes are.
func (p *randomPrim) Vmap(inputs []*array.Array, axes []int) ([]*array.Array, []int) {
	if p.Kind == rngThreefry {
		if axes[0] >= 0 {
			array.Panicf("ops.Threefry2x32", "Vmap over keys is not supported; batch the counts")
		}
		return []*array.Array{Threefry2x32(inputs[0], inputs[1])}, axes[1:]
	}
	k := batchFront(inputs[0], axes[0])
	return []*array.Array{randomNode(p, k)}, []int{0}
}

func randomNode(p *randomPrim, keys *array.Array) *array.Array {
	ks := keys.Shape()
	shape := append(slices.Clone(ks[:len(ks)-1]), p.Shape...)
	checkedBytes("ops."+p.Name(), shape, p.DType)
	return node(shape, p.DType, p, keys)
}

// checkKeys checks keys is a uint32 array whose last axis has size 2.
func checkKeys(op string, keys *array.Array) {
	requireNonNil(op, keys)
	if keys.DType() != array.Uint32 {
		array.Panicf(op, "key of dtype %v, want uint32", keys.DType())
	}
	if s := keys.Shape(); len(s) == 0 || s[len(s)-1] != 2 {
		array.Panicf(op, "key of shape %v, want [2] (or [..., 2] for many keys)", s)
	}
}

func checkDrawShape(op string, shape []int) {
	for _, d := range shape {
		if d < 0 {
			array.Panicf(op, "negative dimension in shape %v", shape)
		}
	}
}

// RandomBits returns random bits of the given shape for every key of
// keys (uint32, shape [..., 2]): [..., shape...] of uint32, uint16 or
// uint8 for width 4, 2 or 1. They are the bits of JAX's random_bits and
// MLX's bits for the same key (Threefry-2x32, 20 rounds).
func RandomBits(keys *array.Array, shape []int, width int) *array.Array {
	const op = "ops.RandomBits"
	checkKeys(op, keys)
	checkDrawShape(op, shape)
	dt := map[int]array.DType{4: array.Uint32, 2: array.Uint16, 1: array.Uint8}[width]
	if dt == 0 {
		array.Panicf(op, "width %d bytes, want 4, 2 or 1", width)
	}
	return randomNode(&randomPrim{Kind: rngBits, Shape: slices.Clone(shape), DType: dt}, keys)
}

// RandomUniform returns MLX's uniform draws in [low, high) of dtype dt
// (float16, bfloat16, float32 or float64) for every key of keys; see
// cpu.RandUniform for the mapping from bits to values.
func RandomUniform(keys *array.Array, shape []int, dt array.DType, low, high float64) *array.Array {
	const op = "ops.RandomUniform"
	checkKeys(op, keys)
	checkDrawShape(op, shape)
	if !dt.IsFloat() {
		array.Panicf(op, "dtype %v is not a float dtype", dt)
	}
	return randomNode(&randomPrim{Kind: rngUniform, Shape: slices.Clone(shape), DType: dt, A: low, B: high}, keys)
}

// RandomNormal returns MLX's normal draws with mean loc and standard
// deviation scale, of dtype dt, for every key of keys; see
// cpu.RandNormal.
func RandomNormal(keys *array.Array, shape []int, dt array.DType, loc, scale float64) *array.Array {
	const op = "ops.RandomNormal"
	checkKeys(op, keys)
	checkDrawShape(op, shape)
	if !dt.IsFloat() {
		array.Panicf(op, "dtype %v is not a float dtype", dt)
	}
	return randomNode(&randomPrim{Kind: rngNormal, Shape: slices.Clone(shape), DType: dt, A: loc, B: scale}, keys)
}

// Threefry2x32 is JAX's threefry_2x32: key is a uint32 [2], counts a
// uint32 array of any shape whose flattened halves are the first and
// second words of the blocks encrypted (an odd count is padded with a
// zero). The result has the counts' shape.
func Threefry2x32(key, counts *array.Array) *array.Array {
	const op = "ops.Threefry2x32"
	checkKeys(op, key)
	requireNonNil(op, counts)
	if key.Ndim() != 1 {
		array.Panicf(op, "key of shape %v, want [2]", key.Shape())
	}
	if counts.DType() != array.Uint32 {
		array.Panicf(op, "counts of dtype %v, want uint32", counts.DType())
	}
	return node(counts.Shape(), array.Uint32, &randomPrim{Kind: rngThreefry, DType: array.Uint32}, key, counts)
}
