package mlp

import (
	"math"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// TestLossStartsNearChance checks the arguments' scaling: with small
// weights the logits are near zero, so the loss is near that of a uniform
// guess over the ten classes, ln 10.
func TestLossStartsNearChance(t *testing.T) {
	args := Args()
	if got := len(args); got != 6 {
		t.Fatalf("%d arguments, want 6", got)
	}
	l, err := array.ToSlice[float32](Loss(args...))
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(float64(l[0]) - math.Log(10)); d > 0.1 {
		t.Errorf("loss %v, want within 0.1 of ln 10 = %v", l[0], math.Log(10))
	}
}
