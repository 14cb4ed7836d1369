// Package random draws counter-based, splittable random numbers the way
// JAX and MLX do: a key is data (a uint32 array of shape [2]), every
// function of a key is pure, and the same key gives the same numbers on
// every device, worker and call, compiled or not.
//
// The generator is Threefry-2x32 with 20 rounds. Bits gives exactly the
// bits of JAX's threefry random_bits and MLX's mx.random.bits for the
// same key and shape, and the distributions map bits to values as MLX's
// do. Functions given a nil key draw from a global key, which Seed
// resets, as MLX's mx.random.seed does: each such call splits the global
// key and uses one half, under a lock.
//
// Random functions are operations: they build lazy nodes, compile and
// Vmap like any other (Vmap over a batch of keys gives each key's own
// numbers), and their values are constants to the derivative, while
// UniformArray's and NormalArray's dependence on their parameters is
// differentiable. See docs/random.md.
//
// Bad arguments (a key that is not uint32 [2], a non-float dtype, an
// empty interval, a negative size) panic with *array.Error.
package random

import (
	"math"
	"slices"
	"sync"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// Key returns the key of seed: uint32 [seed>>32, seed&0xffffffff].
func Key(seed uint64) *array.Array {
	return array.FromSlice([]uint32{uint32(seed >> 32), uint32(seed)})
}

// global is the key used when a function's key is nil.
var global struct {
	sync.Mutex
	key *array.Array
}

// Seed resets the global key to Key(seed).
func Seed(seed uint64) {
	global.Lock()
	global.key = Key(seed)
	global.Unlock()
}

// next splits the global key (Key(0) until Seed is called) into a new
// global key and the one returned, as MLX's KeySequence does.
func next() *array.Array {
	global.Lock()
	defer global.Unlock()
	if global.key == nil {
		global.key = Key(0)
	}
	ks := Split(global.key, 2)
	global.key = ops.Reshape(ops.SliceAxis(ks, 0, ops.R(0, 1)), 2)
	k := ops.Reshape(ops.SliceAxis(ks, 0, ops.R(1, 2)), 2)
	// the new global key is evaluated now, so the chain of splits does
	// not grow with the number of draws
	if err := array.Eval(global.key, k); err != nil {
		panic(err)
	}
	return k
}

// keyOr returns key, or the next key of the global sequence when key is
// nil, after checking it is a uint32 [2].
func keyOr(op string, key *array.Array) *array.Array {
	if key == nil {
		return next()
	}
	if key.DType() != array.Uint32 {
		array.Panicf(op, "key of dtype %v, want uint32", key.DType())
	}
	if !slices.Equal(key.Shape(), []int{2}) {
		array.Panicf(op, "key of shape %v, want [2]", key.Shape())
	}
	return key
}

func checkShape(op string, shape []int) {
	for _, d := range shape {
		if d < 0 {
			array.Panicf(op, "negative dimension in shape %v", shape)
		}
	}
}

func checkFloat(op string, dt array.DType) {
	if !dt.IsFloat() {
		array.Panicf(op, "dtype %v is not a float dtype (float16, bfloat16, float32, float64)", dt)
	}
}

// Split returns n new keys from key: uint32 [n 2] (the bits of [n 2] of
// width 4, as JAX's and MLX's split).
func Split(key *array.Array, n int) *array.Array {
	const op = "random.Split"
	key = keyOr(op, key)
	if n < 0 {
		array.Panicf(op, "negative number of keys %d", n)
	}
	return ops.RandomBits(key, []int{n, 2}, 4)
}

// Threefry2x32 is JAX's threefry_2x32: it encrypts the blocks made of the
// first and second halves of the flattened counts (uint32; an odd count
// is padded with a zero) under key, and returns the counts' shape.
func Threefry2x32(key, counts *array.Array) *array.Array {
	return ops.Threefry2x32(keyOr("random.Threefry2x32", key), counts)
}

// Bits returns random bits of the given shape: uint32, uint16 or uint8
// for width 4, 2 or 1 bytes, the bits of JAX's random_bits and MLX's
// bits for the same key.
func Bits(key *array.Array, shape []int, width int) *array.Array {
	const op = "random.Bits"
	key = keyOr(op, key)
	checkShape(op, shape)
	if width != 4 && width != 2 && width != 1 {
		array.Panicf(op, "width %d bytes, want 4, 2 or 1", width)
	}
	return ops.RandomBits(key, shape, width)
}

// Uniform returns draws in [low, high) of dtype dt (a float dtype): MLX's
// uniform, whose values never reach high (in float16 and bfloat16 too).
// high must exceed low.
func Uniform(key *array.Array, low, high float64, shape []int, dt array.DType) *array.Array {
	const op = "random.Uniform"
	key = keyOr(op, key)
	checkShape(op, shape)
	checkFloat(op, dt)
	if !(high > low) || math.IsInf(high-low, 0) {
		array.Panicf(op, "interval [%v, %v) is empty or infinite", low, high)
	}
	return ops.RandomUniform(key, shape, dt, low, high)
}

// UniformArray is Uniform with array bounds, which broadcast to shape:
// (high-low)*u + low in dtype dt for u = Uniform(key, 0, 1, ...),
// differentiable in low and high. Unlike Uniform it does not check the
// bounds, and, as MLX's, its rounding can reach high for intervals that
// do not start at 0.
func UniformArray(key, low, high *array.Array, shape []int, dt array.DType) *array.Array {
	const op = "random.UniformArray"
	key = keyOr(op, key)
	checkShape(op, shape)
	checkFloat(op, dt)
	checkParams(op, shape, low, high)
	lo, hi := ops.AsType(low, dt), ops.AsType(high, dt)
	u := ops.RandomUniform(key, shape, dt, 0, 1)
	return ops.Add(ops.Mul(ops.Sub(hi, lo), u), lo)
}

// checkParams checks array parameters are not nil and broadcast to shape
// without growing it.
func checkParams(op string, shape []int, ps ...*array.Array) {
	for i, p := range ps {
		if p == nil {
			array.Panicf(op, "parameter %d is nil", i)
		}
		var b []int
		if err := array.Try(func() { b = ops.BroadcastShapes(op, shape, p.Shape()) }); err != nil || !slices.Equal(b, shape) {
			array.Panicf(op, "parameter of shape %v does not broadcast to shape %v", p.Shape(), shape)
		}
	}
}

// Normal returns normal draws with mean loc and standard deviation scale
// of dtype dt: MLX's normal, sqrt(2)*erfinv(v) for v uniform in (-1, 1).
func Normal(key *array.Array, shape []int, dt array.DType, loc, scale float64) *array.Array {
	const op = "random.Normal"
	key = keyOr(op, key)
	checkShape(op, shape)
	checkFloat(op, dt)
	return ops.RandomNormal(key, shape, dt, loc, scale)
}

// NormalArray is Normal with array parameters that broadcast to shape:
// loc + scale*z for z = Normal(key, shape, dt, 0, 1), differentiable in
// loc and scale.
func NormalArray(key *array.Array, shape []int, dt array.DType, loc, scale *array.Array) *array.Array {
	const op = "random.NormalArray"
	key = keyOr(op, key)
	checkShape(op, shape)
	checkFloat(op, dt)
	checkParams(op, shape, loc, scale)
	z := ops.RandomNormal(key, shape, dt, 0, 1)
	return ops.Add(ops.AsType(loc, dt), ops.Mul(ops.AsType(scale, dt), z))
}

// TruncatedNormal returns standard normal draws truncated to [lower,
// upper] (MLX's and JAX's: sqrt(2)*erfinv(u) for u uniform between
// erf(lower/sqrt(2)) and erf(upper/sqrt(2)), clipped to the bounds).
func TruncatedNormal(key *array.Array, lower, upper float64, shape []int, dt array.DType) *array.Array {
	const op = "random.TruncatedNormal"
	checkShape(op, shape)
	checkFloat(op, dt)
	if !(upper > lower) {
		array.Panicf(op, "bounds [%v, %v] are empty", lower, upper)
	}
	lo, hi := ops.Full(nil, lower, dt), ops.Full(nil, upper, dt)
	return TruncatedNormalArray(key, lo, hi, shape, dt)
}

// TruncatedNormalArray is TruncatedNormal with array bounds that
// broadcast to shape.
func TruncatedNormalArray(key, lower, upper *array.Array, shape []int, dt array.DType) *array.Array {
	const op = "random.TruncatedNormalArray"
	key = keyOr(op, key)
	checkShape(op, shape)
	checkFloat(op, dt)
	checkParams(op, shape, lower, upper)
	lo, hi := ops.AsType(lower, dt), ops.AsType(upper, dt)
	a := ops.Erf(ops.DivScalar(lo, math.Sqrt2))
	b := ops.Erf(ops.DivScalar(hi, math.Sqrt2))
	u := UniformArray(key, a, b, shape, dt)
	out := ops.MulScalar(ops.ErfInv(u), math.Sqrt2)
	return ops.Maximum(ops.Minimum(hi, out), lo)
}

// bernoulliUpper is the float32 just above 2^32-1 (4294967296), which
// MLX scales p by, so that p >= 1 gives all true and p <= 0 all false.
const bernoulliUpper = 4294967296.0

// Bernoulli returns bools of the given shape, true with probability p:
// MLX's bernoulli, float32(bits) < float32(p * 2^32).
func Bernoulli(key *array.Array, p float64, shape []int) *array.Array {
	const op = "random.Bernoulli"
	key = keyOr(op, key)
	checkShape(op, shape)
	if math.IsNaN(p) {
		array.Panicf(op, "probability is NaN")
	}
	u := ops.AsType(ops.RandomBits(key, shape, 4), array.Float32)
	return ops.Less(u, ops.Full(nil, float64(float32(p*bernoulliUpper)), array.Float32))
}

// BernoulliArray is Bernoulli with a float array of probabilities that
// broadcasts to shape.
func BernoulliArray(key, p *array.Array, shape []int) *array.Array {
	const op = "random.BernoulliArray"
	key = keyOr(op, key)
	checkShape(op, shape)
	checkParams(op, shape, p)
	if !p.DType().IsFloat() {
		array.Panicf(op, "probabilities of dtype %v, want a float dtype", p.DType())
	}
	u := ops.AsType(ops.RandomBits(key, shape, 4), array.Float32)
	return ops.Less(u, ops.MulScalar(ops.AsType(p, array.Float32), bernoulliUpper))
}

// RandInt returns integers in [low, high) of the integer dtype dt, as
// MLX's randint: low + bits mod (high-low) in 64-bit unsigned arithmetic,
// with 64 bits from two keys split from key for int64 and uint64 and 32
// bits otherwise. high must exceed low, and both must fit dt.
func RandInt(key *array.Array, low, high int64, shape []int, dt array.DType) *array.Array {
	const op = "random.RandInt"
	key = keyOr(op, key)
	checkShape(op, shape)
	if !dt.IsInteger() {
		array.Panicf(op, "dtype %v is not an integer dtype", dt)
	}
	if high <= low {
		array.Panicf(op, "interval [%d, %d) is empty", low, high)
	}
	if !fits(low, dt) || !fits(high-1, dt) {
		array.Panicf(op, "interval [%d, %d) does not fit dtype %v", low, high, dt)
	}
	rng := uint64(high) - uint64(low)
	var raw *array.Array
	if dt.Size() == 8 {
		ks := Split(key, 2)
		lo := ops.AsType(ops.RandomBits(ops.Reshape(ops.SliceAxis(ks, 0, ops.R(0, 1)), 2), shape, 4), array.Uint64)
		hi := ops.AsType(ops.RandomBits(ops.Reshape(ops.SliceAxis(ks, 0, ops.R(1, 2)), 2), shape, 4), array.Uint64)
		// hi<<32 | lo, as hi*2^32 + lo (no bit operations in ops yet)
		raw = ops.Add(ops.Mul(hi, u64Scalar(1<<32)), lo)
	} else {
		raw = ops.AsType(ops.RandomBits(key, shape, 4), array.Uint64)
	}
	off := ops.Remainder(raw, u64Scalar(rng))
	return ops.AsType(ops.Add(off, u64Scalar(uint64(low))), dt)
}

func u64Scalar(v uint64) *array.Array { return array.Scalar(v) }

// fits reports whether v is a value of the integer dtype dt.
func fits(v int64, dt array.DType) bool {
	switch dt {
	case array.Int8:
		return v >= math.MinInt8 && v <= math.MaxInt8
	case array.Int16:
		return v >= math.MinInt16 && v <= math.MaxInt16
	case array.Int32:
		return v >= math.MinInt32 && v <= math.MaxInt32
	case array.Uint8:
		return v >= 0 && v <= math.MaxUint8
	case array.Uint16:
		return v >= 0 && v <= math.MaxUint16
	case array.Uint32:
		return v >= 0 && v <= math.MaxUint32
	case array.Uint64:
		return v >= 0
	}
	return true
}

// Gumbel returns standard Gumbel draws of dtype dt: -log(-log(u)) for u
// = Uniform(key, 0, 1, shape, dt), as MLX's gumbel.
func Gumbel(key *array.Array, shape []int, dt array.DType) *array.Array {
	const op = "random.Gumbel"
	key = keyOr(op, key)
	checkShape(op, shape)
	checkFloat(op, dt)
	u := ops.RandomUniform(key, shape, dt, 0, 1)
	return ops.Neg(ops.Log(ops.Neg(ops.Log(u))))
}

// Laplace returns Laplace draws with location loc and scale scale, as
// MLX's laplace: sign(v)*log1p(-|v|) for v uniform in (-1, 1) in float32,
// converted to dt, times scale, plus loc.
func Laplace(key *array.Array, shape []int, dt array.DType, loc, scale float64) *array.Array {
	const op = "random.Laplace"
	key = keyOr(op, key)
	checkShape(op, shape)
	checkFloat(op, dt)
	v := ops.RandomUniform(key, shape, array.Float32, float64(math.Nextafter32(-1, 0)), 1)
	s := ops.AsType(ops.Mul(ops.Sign(v), ops.Log1p(ops.Neg(ops.Abs(v)))), dt)
	if scale != 1 {
		s = ops.MulScalar(s, scale)
	}
	if loc != 0 {
		s = ops.AddScalar(s, loc)
	}
	return s
}

// Categorical returns samples of the categories along axis of logits
// (unnormalised log probabilities): the argmax of logits plus Gumbel
// noise, as MLX's categorical. The result is int32 with axis removed.
func Categorical(key, logits *array.Array, axis int) *array.Array {
	const op = "random.Categorical"
	key = keyOr(op, key)
	ax := logitsAxis(op, logits, axis)
	g := Gumbel(key, logits.Shape(), array.Float32)
	return ops.ArgMax(ops.Add(ops.AsType(logits, array.Float32), g), ax)
}

// CategoricalN returns numSamples samples for each distribution of
// logits: int32 of logits' shape without axis, followed by numSamples.
func CategoricalN(key, logits *array.Array, axis, numSamples int) *array.Array {
	const op = "random.CategoricalN"
	key = keyOr(op, key)
	ax := logitsAxis(op, logits, axis)
	if numSamples < 0 {
		array.Panicf(op, "negative number of samples %d", numSamples)
	}
	// MLX's layout: logits get a trailing axis of size 1 and the noise
	// has logits' shape without axis, numSamples last, and axis's size at
	// axis.
	l := ops.ExpandDims(ops.AsType(logits, array.Float32), -1)
	shape := slices.Clone(logits.Shape())
	shape = append(slices.Delete(shape, ax, ax+1), numSamples)
	gshape := slices.Insert(slices.Clone(shape), ax, logits.Shape()[ax])
	g := Gumbel(key, gshape, array.Float32)
	return ops.ArgMax(ops.Add(g, l), ax)
}

func logitsAxis(op string, logits *array.Array, axis int) int {
	if logits == nil {
		array.Panicf(op, "logits are nil")
	}
	if !logits.DType().IsFloat() {
		array.Panicf(op, "logits of dtype %v, want a float dtype", logits.DType())
	}
	n := logits.Ndim()
	ax := axis
	if ax < 0 {
		ax += n
	}
	if ax < 0 || ax >= n {
		array.Panicf(op, "axis %d out of range for logits of shape %v", axis, logits.Shape())
	}
	return ax
}

// Permutation returns a random permutation of 0 .. n-1 (int32): the
// argsort of n random words, as MLX's permutation.
func Permutation(key *array.Array, n int) *array.Array {
	const op = "random.Permutation"
	key = keyOr(op, key)
	if n < 0 {
		array.Panicf(op, "negative length %d", n)
	}
	return ops.ArgSort(ops.RandomBits(key, []int{n}, 4), 0)
}

// PermutationOf returns x with its elements along axis in a random order
// (Take of Permutation(key, x.Shape()[axis])).
func PermutationOf(key, x *array.Array, axis int) *array.Array {
	const op = "random.PermutationOf"
	key = keyOr(op, key)
	if x == nil {
		array.Panicf(op, "array is nil")
	}
	ax := axis
	if ax < 0 {
		ax += x.Ndim()
	}
	if ax < 0 || ax >= x.Ndim() {
		array.Panicf(op, "axis %d out of range for shape %v", axis, x.Shape())
	}
	return ops.Take(x, Permutation(key, x.Shape()[ax]), ax)
}
