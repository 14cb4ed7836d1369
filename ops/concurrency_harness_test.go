//go:build fathom_mslharness

package ops_test

import (
	"testing"

	"github.com/fathom-go/fathom/array"
)

// TestConcurrentEvalOfOverlappingGraphsOnGPU runs the concurrency suite
// with the GPU (the MSL harness) as the default device: a node is ready
// only once its stream has synchronized, whichever Eval queued it.
func TestConcurrentEvalOfOverlappingGraphsOnGPU(t *testing.T) {
	if err := array.SetDefaultDevice(array.GPU); err != nil {
		t.Fatal(err)
	}
	defer array.SetDefaultDevice(array.CPU)
	if d := newOverlapCase(1).outs[0].Stream().Device; d != array.GPU {
		t.Fatalf("the suite's graph runs on %v, want the GPU", d)
	}
	concurrencySuite(t, 6)
}
