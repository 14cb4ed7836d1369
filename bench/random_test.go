package bench

import (
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/random"
)

// BenchmarkRandom draws float32 Uniform and Normal numbers and raw bits
// (Threefry-2x32, 20 rounds, split over cores by counter ranges). The
// bytes are those written. bench/compare runs the 16M rows next to
// numpy's default_rng (PCG64) and torch.
func BenchmarkRandom(b *testing.B) {
	key := random.Key(0)
	for _, s := range sizes {
		n := s.rows * s.cols
		b.Run("Uniform/"+s.name, func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				mustEval(b, random.Uniform(key, 0, 1, []int{n}, array.Float32))
			}
		})
		b.Run("Normal/"+s.name, func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				mustEval(b, random.Normal(key, []int{n}, array.Float32, 0, 1))
			}
		})
		b.Run("Bits/"+s.name, func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				mustEval(b, random.Bits(key, []int{n}, 4))
			}
		})
	}
}
