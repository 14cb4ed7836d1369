package cpu

import (
	"fmt"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// BenchmarkGrain measures where splitting an elementwise kernel over cores
// starts to pay: float32 Add at sizes around Grain, run on one goroutine
// (Grain above the size) and split (Grain below it).
func BenchmarkGrain(b *testing.B) {
	for _, n := range []int{8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10} {
		x := Contiguous(make([]byte, 4*n), array.Float32, []int{n})
		y := Contiguous(make([]byte, 4*n), array.Float32, []int{n})
		out := Contiguous(make([]byte, 4*n), array.Float32, []int{n})
		for _, split := range []bool{false, true} {
			name := fmt.Sprintf("%dK/serial", n>>10)
			g := n + 1
			if split {
				name = fmt.Sprintf("%dK/split", n>>10)
				g = 1024
			}
			b.Run(name, func(b *testing.B) {
				old := Grain
				Grain = g
				defer func() { Grain = old }()
				b.SetBytes(int64(12 * n))
				for b.Loop() {
					if err := Binary(Add, out, x, y); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
