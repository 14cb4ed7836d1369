package mlp

import (
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
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

// TestStep checks Step's results: a gradient shaped like each of the four
// parameters, then the loss that Loss gives.
func TestStep(t *testing.T) {
	args := Args()
	out := Step(args...)
	if len(out) != 5 {
		t.Fatalf("Step returned %d arrays, want 4 gradients and the loss", len(out))
	}
	for i, g := range out[:4] {
		if !slices.Equal(g.Shape(), args[i].Shape()) {
			t.Errorf("gradient %d has shape %v, want the parameter's %v", i, g.Shape(), args[i].Shape())
		}
	}
	if d := cmp.Diff(Loss(args...), out[4], arraytest.Approx(0, 0)); d != "" {
		t.Errorf("Step's loss differs from Loss's (-want +got):\n%s", d)
	}
}
