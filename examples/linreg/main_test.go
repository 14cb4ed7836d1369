package main

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
)

func TestFitRecoversCoefficients(t *testing.T) {
	x, y := synthetic(rand.New(rand.NewPCG(42, 1)))
	var losses []float64
	w, b, err := fit(x, y, func(_ int, loss float64) { losses = append(losses, loss) })
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(losses); i++ {
		if losses[i] > losses[i-1]*(1+1e-3) {
			t.Fatalf("loss rose from %g to %g: %v", losses[i-1], losses[i], losses)
		}
	}
	// the noise has variance 1e-4: the loss ends near it
	if last := losses[len(losses)-1]; last > 2e-4 {
		t.Fatalf("final loss %g, want about 1e-4", last)
	}
	want := array.FromSlice(slices.Concat(trueW, []float32{trueB}))
	got := array.FromSlice(slices.Concat(w, []float32{b}))
	arraytest.AssertClose(t, want, got, arraytest.Tol{Atol: 5e-3}, "w and b")
}
