package ops_test

import (
	"math"
	"runtime"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// TestPendingNodeMemoryIsBounded guards what a pending node costs before
// evaluation (issue: a 1,000,000-op chain peaked at 1.1 GiB). A chain of
// AddScalar held 456 live bytes a node when each step made a fresh
// scalar operand; with shared scalars it holds about 220.
func TestPendingNodeMemoryIsBounded(t *testing.T) {
	const chain, limit = 20000, 256
	x := ops.Zeros([]int{8}, array.Float32)
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	y := x
	for range chain {
		y = ops.AddScalar(y, 1)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	perNode := float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / chain
	if perNode > limit {
		t.Errorf("a pending AddScalar node holds %.0f bytes, want at most %d", perNode, limit)
	}
	got, err := array.ToSlice[float32](y)
	if err != nil || got[0] != chain {
		t.Errorf("chain evaluates to %v (%v), want %d", got, err, chain)
	}
}

// TestSharedScalarOperandsKeepTheirValue checks the table that shares
// scalar operands: values that evict each other from its slots, values
// equal but for their dtype or the sign of zero, all give their own
// results.
func TestSharedScalarOperandsKeepTheirValue(t *testing.T) {
	f := array.FromSlice([]float32{1, -2})
	n := array.FromSlice([]int32{1, -2})
	for i := range 3000 {
		v := float64(i%700) - 350 // more distinct values than slots
		got, err := array.ToSlice[float32](ops.MulScalar(f, v))
		if err != nil || got[0] != float32(v) || got[1] != float32(-2*v) {
			t.Fatalf("float32 times %v = %v (%v)", v, got, err)
		}
		gi, err := array.ToSlice[int32](ops.AddScalar(n, v))
		if err != nil || gi[0] != int32(1+v) || gi[1] != int32(-2+v) {
			t.Fatalf("int32 plus %v = %v (%v)", v, gi, err)
		}
	}
	// 1/(x*+0) and 1/(x*-0) differ in sign only if the zeros stay apart
	pos, _ := array.ToSlice[float32](ops.Div(array.FromSlice([]float32{1}), ops.MulScalar(array.FromSlice([]float32{1}), 0)))
	neg, _ := array.ToSlice[float32](ops.Div(array.FromSlice([]float32{1}), ops.MulScalar(array.FromSlice([]float32{1}), math.Copysign(0, -1))))
	if !math.IsInf(float64(pos[0]), 1) || !math.IsInf(float64(neg[0]), -1) {
		t.Errorf("1/(1*0) = %v and 1/(1*-0) = %v; want +Inf and -Inf", pos, neg)
	}
}
