package array

import (
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// backendPool is a backend's pool for NewPooledStorage: it counts what
// comes back each way.
type backendPool struct {
	collected, recycled atomic.Int32
}

func (p *backendPool) storage(n int) *Storage {
	return NewPooledStorage(make([]byte, n), GPU, new(int), func(any) { p.collected.Add(1) }, func(any) { p.recycled.Add(1) })
}

// TestPooledStorageGoesBackOnce: a backend's storage comes back through
// its recycle function when compile frees it early, and then never
// through a collection; one compile does not free comes back through a
// collection.
func TestPooledStorageGoesBackOnce(t *testing.T) {
	var p backendPool
	x := storageArray(p.storage(1024), 256)
	HoldTransient(x, nil)
	DropTransient(x)
	if p.recycled.Load() != 1 || x.Storage().Bytes() != nil {
		t.Fatalf("recycled %d times, %d bytes left, want once and none", p.recycled.Load(), len(x.Storage().Bytes()))
	}
	if err := x.Eval(); err == nil || !strings.Contains(err.Error(), "no value any more") {
		t.Errorf("reading a recycled storage: %v, want an error", err)
	}
	x = nil
	p.storage(1024)
	deadline := time.Now().Add(5 * time.Second)
	for p.collected.Load() < 1 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	if c, r := p.collected.Load(), p.recycled.Load(); c != 1 || r != 1 {
		t.Errorf("collected %d and recycled %d times, want once each: the recycled storage must not be collected again", c, r)
	}
}

// TestRecycleGivesBackNow: Recycle returns a pooled CPU buffer to the pool
// at once, once; it refuses a buffer compile tracks and a small buffer.
func TestRecycleGivesBackNow(t *testing.T) {
	const n = 64 << 10
	base := settle(t)
	st := AllocCPU(n)
	cached := CPUPoolStats().Cached
	if !st.Recycle() {
		t.Fatal("Recycle refused an untracked pooled buffer")
	}
	if got := ActiveMemory(); got != base {
		t.Errorf("ActiveMemory %d after Recycle, want %d", got, base)
	}
	if got := CPUPoolStats().Cached - cached; got != n {
		t.Errorf("the pool gained %d bytes, want %d", got, n)
	}
	if st.Recycle() {
		t.Error("a second Recycle of the same storage gave it back again")
	}
	held := AllocCPU(n)
	x := storageArray(held, n/4)
	HoldTransient(x, nil)
	if held.Recycle() {
		t.Error("Recycle gave back a buffer compile tracks as transient")
	}
	if AllocCPU(64).Recycle() {
		t.Error("Recycle gave back a small buffer, which is not pooled")
	}
	DropTransient(x)
}

// TestFailedStorageFailsEveryRead: a failure recorded on a storage is what
// every Eval of an array over it returns, an op that reads it included;
// the first failure stays.
func TestFailedStorageFailsEveryRead(t *testing.T) {
	first, second := errors.New("command buffer failed: timeout"), errors.New("later")
	st := AllocCPU(8 << 10)
	x := storageArray(st, 2<<10)
	if st.Err() != nil || !st.Fail(first) || !st.Fail(second) {
		t.Fatal("a pooled storage does not take a failure")
	}
	if st.Err() != first {
		t.Errorf("Err() = %v, want the first failure", st.Err())
	}
	for range 2 {
		if err := x.Eval(); err != first {
			t.Errorf("Eval of a failed array: %v, want %v", err, first)
		}
	}
	y := New(CurrentStream(), []int{2 << 10}, Float32, copyPrim{}, x)
	if err := y.Eval(); err != first {
		t.Errorf("Eval of an op over a failed array: %v, want %v", err, first)
	}
	if AllocCPU(64).Fail(first) || (&Storage{}).Err() != nil {
		t.Error("a storage that is not pooled took a failure")
	}
}
