package cpu

import (
	"fmt"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

// BenchmarkGrain measures where splitting an elementwise kernel over cores
// starts to pay: float32 Add at sizes around grain, run on one goroutine
// (grain above the size) and split (grain below it).
func BenchmarkGrain(b *testing.B) {
	for _, n := range []int{8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10} {
		x := contiguous(make([]byte, 4*n), array.Float32, []int{n})
		y := contiguous(make([]byte, 4*n), array.Float32, []int{n})
		out := contiguous(make([]byte, 4*n), array.Float32, []int{n})
		for _, split := range []bool{false, true} {
			name := fmt.Sprintf("%dK/serial", n>>10)
			g := n + 1
			if split {
				name = fmt.Sprintf("%dK/split", n>>10)
				g = 1024
			}
			b.Run(name, func(b *testing.B) {
				old := grain
				grain = g
				defer func() { grain = old }()
				b.SetBytes(int64(12 * n))
				for b.Loop() {
					if err := Binary(opset.Add, out, x, y); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
