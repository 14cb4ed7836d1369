package array_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/internal/strided"

	"github.com/fathom-go/fathom/array"
)

// allocPrim allocates an output of its output's size, as every kernel
// does, so Eval meets the allocator's refusal.
type allocPrim struct{}

func (allocPrim) Name() string { return "Alloc" }
func (allocPrim) Eval(_ array.Stream, _, out []*array.Array) error {
	out[0].SetData(array.AllocCPU(out[0].NBytes()), strided.RowMajor(out[0].Shape()), 0)
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

// TestToSliceOfHugeViewIsAnError guards ToSlice, which copies a view into
// a fresh Go slice: a broadcast view of 2^40 elements must be refused, not
// end the process in the runtime's out-of-memory error.
func TestToSliceOfHugeViewIsAnError(t *testing.T) {
	st := array.AllocCPU(4)
	v := array.FromStorage(array.CurrentStream(), []int{1 << 40}, array.Float32, st, []int{0}, 0)
	_, err := array.ToSlice[float32](v)
	var e *array.Error
	if !errors.As(err, &e) || e.Op != "array.ToSlice" || !errors.Is(err, array.ErrOutOfMemory) {
		t.Errorf("ToSlice of a 4 TiB view: %v; want an array.ToSlice error wrapping ErrOutOfMemory", err)
	}
}

// TestEmptyShapeAcceptedWhereverTheZeroIs guards the element count of an
// empty shape: it is 0 whatever the other dimensions, so whether a shape
// is accepted cannot depend on the order of its axes (a transpose of a
// valid array used to be refused).
func TestEmptyShapeAcceptedWhereverTheZeroIs(t *testing.T) {
	for _, shape := range [][]int{{0, 1 << 40, 1 << 40}, {1 << 40, 1 << 40, 0}, {1 << 40, 0, 1 << 40}} {
		var a *array.Array
		if err := array.Try(func() { a = array.NewPlaceholder(array.CurrentStream(), shape, array.Float32) }); err != nil {
			t.Errorf("shape %v: %v", shape, err)
			continue
		}
		if a.Size() != 0 || a.NBytes() != 0 {
			t.Errorf("shape %v: size %d, %d bytes; want 0", shape, a.Size(), a.NBytes())
		}
	}
	if err := array.Try(func() { array.NewPlaceholder(array.CurrentStream(), []int{1 << 40, 1 << 40}, array.Float32) }); err == nil {
		t.Error("a shape of 2^80 elements was accepted")
	}
}

// TestEvalPastMemoryLimitFailsAndLeavesTheProcessUsable sets a limit
// below an output: Eval returns an *array.Error naming the primitive,
// the shape and the sizes, wrapping ErrOutOfMemory, and a smaller
// evaluation afterwards runs.
func TestEvalPastMemoryLimitFailsAndLeavesTheProcessUsable(t *testing.T) {
	runtime.GC()
	prev := array.SetMemoryLimit(array.ActiveMemory() + 4<<20)
	t.Cleanup(func() { array.SetMemoryLimit(prev) })
	big := array.New(array.CurrentStream(), []int{2 << 20}, array.Float32, allocPrim{})
	err := big.Eval()
	var e *array.Error
	if !errors.As(err, &e) || !errors.Is(err, array.ErrOutOfMemory) {
		t.Fatalf("Eval of 8 MiB under a 4 MiB limit: %v; want an *array.Error wrapping ErrOutOfMemory", err)
	}
	for _, want := range []string{"[2097152] float32", "8 MiB requested", "memory limit of"} {
		if e.Op != "Alloc" || !strings.Contains(e.Msg, want) {
			t.Errorf("error %q of op %q should name the primitive Alloc and say %q", e.Msg, e.Op, want)
		}
	}
	small := array.New(array.CurrentStream(), []int{256 << 10}, array.Float32, allocPrim{})
	if err := small.Eval(); err != nil {
		t.Errorf("a 1 MiB evaluation after the refusal: %v", err)
	}
	if got := array.FromSlice([]float32{1, 2, 3}).Size(); got != 3 {
		t.Errorf("a small array after the refusal has %d elements", got)
	}
}
