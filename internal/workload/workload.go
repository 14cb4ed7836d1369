// Package workload holds what fathom's two kinds of speed measurement
// share, so that they time the same thing: the go test benchmarks in
// bench and the side-by-side comparison in bench/compare. It has the
// benchmarks' inputs, the tanh-GELU they compile and the STREAM-triad
// bandwidth probe that memory-bound results are read against.
package workload

import (
	"math"
	"math/rand/v2"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/ops"
)

// RandF32 returns n values uniform in [-1, 1), the same for the same seed.
func RandF32(n int, seed uint64) []float32 { return uniform(n, seed, 1, (*rand.Rand).Float32) }

// RandF64 is RandF32 for float64.
func RandF64(n int, seed uint64) []float64 { return uniform(n, seed, 2, (*rand.Rand).Float64) }

// uniform returns n values uniform in [-1, 1) from next, drawn from the
// stream of a generator seeded with seed.
func uniform[T float32 | float64](n int, seed, stream uint64, next func(*rand.Rand) T) []T {
	r := rand.New(rand.NewPCG(seed, stream))
	v := make([]T, n)
	for i := range v {
		v[i] = next(r)*2 - 1
	}
	return v
}

// GELU is the tanh approximation of GELU, as PyTorch's
// F.gelu(approximate="tanh"): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x³))).
func GELU(in ...*array.Array) []*array.Array {
	x := in[0]
	inner := ops.MulScalar(ops.Add(x, ops.MulScalar(ops.Mul(ops.Square(x), x), 0.044715)), math.Sqrt(2/math.Pi))
	return []*array.Array{ops.Mul(ops.MulScalar(x, 0.5), ops.AddScalar(ops.Tanh(inner), 1))}
}

// Triad is STREAM's triad a = b + 3c over n float32 (cpu.Triad). A run
// moves TriadBytes(n) bytes, counting as STREAM does.
type Triad struct {
	a, b, c []float32
}

// NewTriad allocates the triad's arrays and touches them, so that a run
// measures bandwidth rather than fresh pages.
func NewTriad(n int) *Triad {
	t := &Triad{a: make([]float32, n), b: RandF32(n, 1), c: RandF32(n, 2)}
	copy(t.a, t.b)
	return t
}

// TriadBytes is the memory a triad over n elements moves: it reads b and
// c and writes a.
func TriadBytes(n int) int64 { return 12 * int64(n) }

// Run computes a = b + 3c once.
func (t *Triad) Run() { cpu.Triad(t.a, t.b, t.c, 3) }

// A returns the result, a.
func (t *Triad) A() []float32 { return t.a }
