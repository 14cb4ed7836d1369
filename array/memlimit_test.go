package array_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// allocPrim allocates an output of its output's size, as every kernel
// does, so Eval meets the allocator's refusal.
type allocPrim struct{}

func (allocPrim) Name() string { return "Alloc" }
func (allocPrim) Eval(_ array.Stream, _, out []*array.Array) error {
	out[0].SetData(array.AllocCPU(out[0].NBytes()), array.RowMajorStrides(out[0].Shape()), 0)
	return nil
}

// TestAllocationBeyondMemoryIsAnErrorFromEval guards against the
// runtime's unrecoverable "out of memory" and "makeslice: len out of
// range": an output larger than the machine is an error from Eval that
// names the primitive and the shape, and the process goes on.
func TestAllocationBeyondMemoryIsAnErrorFromEval(t *testing.T) {
	for _, shape := range [][]int{
		{1 << 31, 1 << 31}, // 4 EiB of uint8: past makeslice's limit
		{1 << 40},          // 1 TiB
	} {
		a := array.New(array.CurrentStream(), shape, array.Uint8, allocPrim{})
		err := a.Eval()
		var e *array.Error
		if !errors.As(err, &e) || !errors.Is(err, array.ErrOutOfMemory) {
			t.Fatalf("shape %v: Eval returned %v; want an *array.Error wrapping ErrOutOfMemory", shape, err)
		}
		if e.Op != "Alloc" || !strings.Contains(e.Msg, "memory") || !strings.Contains(e.Msg, fmt.Sprint(shape)) {
			t.Errorf("shape %v: error %q should name the primitive, the shape and the memory", shape, err)
		}
	}
	if err := array.Try(func() { array.AllocCPU(1 << 50) }); !errors.Is(err, array.ErrOutOfMemory) {
		t.Errorf("AllocCPU(1<<50) outside Eval: %v; want a *Error wrapping ErrOutOfMemory", err)
	}
	if got := array.FromSlice([]float32{1, 2}).Size(); got != 2 {
		t.Errorf("after refused allocations a small array has %d elements", got)
	}
}

// TestByteSizeOverflowIsAnErrorAtTheCall guards shapes whose element
// count fits in an int but whose byte count does not: they used to reach
// a kernel and panic with an index out of range on a worker goroutine.
func TestByteSizeOverflowIsAnErrorAtTheCall(t *testing.T) {
	for _, c := range []struct {
		shape []int
		dt    array.DType
	}{
		{[]int{1 << 31, 1 << 31}, array.Float32},
		{[]int{1 << 61}, array.Float64},
		{[]int{1 << 62}, array.Int32},
	} {
		err := array.Try(func() { array.New(array.CurrentStream(), c.shape, c.dt, allocPrim{}) })
		var e *array.Error
		if !errors.As(err, &e) || e.Op != "Alloc" || !strings.Contains(e.Msg, "bytes") || !strings.Contains(e.Msg, fmt.Sprint(c.shape)) {
			t.Errorf("shape %v of %v: %v; want an *array.Error naming the op, the shape and the byte size", c.shape, c.dt, err)
		}
	}
	// the largest uint8 array that is addressable is accepted
	if err := array.Try(func() { array.New(array.CurrentStream(), []int{1 << 31, 1 << 31}, array.Uint8, allocPrim{}) }); err != nil {
		t.Errorf("a uint8 shape of 2^62 bytes: %v", err)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 24 << 30: "24 GiB", 1 << 62: "4 EiB"} {
		if got := array.FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
