package cpu

import (
	"testing"

	"github.com/fathom-go/fathom/array"
)

// TestCopyContiguousOffsets: a row-major copy between views that start
// inside their memory moves exactly the view's elements, whether it is
// small enough to be one move or goes through the walker.
func TestCopyContiguousOffsets(t *testing.T) {
	for _, n := range []int{1, 7, grain, grain + 1, 3 * grain} {
		src := make([]float32, n+5)
		for i := range src {
			src[i] = float32(i)
		}
		dst := make([]float32, n+9)
		for i := range dst {
			dst[i] = -1
		}
		in := Buf{Data: asBytes(src), DType: array.Float32, Shape: []int{n}, Strides: []int{1}, Offset: 3}
		out := Buf{Data: asBytes(dst), DType: array.Float32, Shape: []int{n}, Strides: []int{1}, Offset: 4}
		if err := Copy(out, in); err != nil {
			t.Fatal(err)
		}
		for i, v := range dst {
			want := float32(-1)
			if i >= 4 && i < 4+n {
				want = float32(i - 4 + 3)
			}
			if v != want {
				t.Fatalf("n=%d: dst[%d] = %v, want %v", n, i, v, want)
			}
		}
	}
}
