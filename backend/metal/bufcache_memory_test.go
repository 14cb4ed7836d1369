package metal

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fathom-go/fathom/array"
)

// settleGPU collects garbage until the GPU's active bytes stop changing,
// so that buffers earlier tests dropped are back.
func settleGPU(t *testing.T) int64 {
	t.Helper()
	last := int64(-1)
	for range 200 {
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
		a := array.DeviceMemory(array.GPU).Active
		if a == last {
			return a
		}
		last = a
	}
	t.Fatal("the GPU's active memory did not settle")
	return 0
}

// TestBufCacheCountsIntoArrayMemory checks that GPU buffers are counted
// by array's memory API, exactly, at their size class: from allocation
// until their Storage dies, whether reused from the cache or new.
func TestBufCacheCountsIntoArrayMemory(t *testing.T) {
	h, _ := newFakeHost(t, testConfig())
	c := h.cache
	base := settleGPU(t)
	total := array.ActiveMemory()
	array.ResetPeakMemory()
	for _, n := range []int{1 << 20, 1000000, 100, 3*gpuPage + 1} {
		st, err := c.alloc(n)
		if err != nil {
			t.Fatal(err)
		}
		class := int64(gpuSizeClass(n))
		if got := array.DeviceMemory(array.GPU).Active - base; got != class {
			t.Errorf("alloc(%d): the GPU's Active rose by %d, want its class %d", n, got, class)
		}
		if got := array.ActiveMemory() - total; got != class {
			t.Errorf("alloc(%d): ActiveMemory rose by %d, want %d", n, got, class)
		}
		runtime.KeepAlive(st)
		st = nil
		if !waitFor(func() bool { return array.DeviceMemory(array.GPU).Active == base }) {
			t.Fatalf("alloc(%d): the GPU's Active stayed at %d after the storage died, want %d",
				n, array.DeviceMemory(array.GPU).Active, base)
		}
	}
	if got := array.DeviceMemory(array.GPU).Peak; got != base+1<<20 {
		t.Errorf("the GPU's Peak %d, want %d", got, base+1<<20)
	}
	// a cached buffer is counted again when it is reused
	st, _ := c.alloc(1 << 20)
	if got := array.DeviceMemory(array.GPU).Active - base; got != 1<<20 || c.stats().Cached == 0 {
		t.Errorf("a reused buffer: Active rose by %d, %d cached", got, c.stats().Cached)
	}
	runtime.KeepAlive(st)
}

// TestBufCacheSetCacheLimit lowers the cache's limit: the buffers freed
// longest ago go back to Metal until the cache fits.
func TestBufCacheSetCacheLimit(t *testing.T) {
	h, g := newFakeHost(t, testConfig())
	c := h.cache
	a, _ := c.alloc(gpuPage)
	b, _ := c.alloc(2 * gpuPage)
	idA := deviceBuf(a).id
	runtime.KeepAlive(a)
	a = nil
	if !waitFor(func() bool { return c.stats().Cached == gpuPage }) {
		t.Fatalf("a's buffer not cached: %+v", c.stats())
	}
	runtime.KeepAlive(b)
	b = nil
	if !waitFor(func() bool { return c.stats().Cached == 3*gpuPage }) {
		t.Fatalf("b's buffer not cached: %+v", c.stats())
	}
	c.setCacheLimit(2 * gpuPage)
	if s := c.stats(); s.Cached != 2*gpuPage || g.freedCount() != 1 || g.live(idA) {
		t.Errorf("after lowering the limit: %+v, %d freed, a's buffer live %v; want b's 2 pages kept", s, g.freedCount(), g.live(idA))
	}
	c.setCacheLimit(0)
	if s := c.stats(); s.Cached != 0 || g.freedCount() != 2 {
		t.Errorf("with caching off: %+v, %d freed", s, g.freedCount())
	}
}

// TestBufCacheHonoursMemoryLimit checks that array.SetMemoryLimit bounds
// GPU allocations too: past it, after collecting, alloc fails with an
// error that names the sizes and wraps ErrOutOfMemory, and a smaller
// allocation then works.
func TestBufCacheHonoursMemoryLimit(t *testing.T) {
	h, _ := newFakeHost(t, testConfig())
	c := h.cache
	settleGPU(t)
	prev := array.SetMemoryLimit(array.ActiveMemory() + 2<<20)
	t.Cleanup(func() { array.SetMemoryLimit(prev) })
	_, err := c.allocWaiting(4 << 20)
	var e *array.Error
	if !errors.As(err, &e) || !errors.Is(err, array.ErrOutOfMemory) || e.Op != "metal.Alloc" ||
		!strings.Contains(e.Msg, "4 MiB requested") || !strings.Contains(e.Msg, "memory limit") {
		t.Fatalf("4 MiB under a 2 MiB limit: %v; want a metal.Alloc error naming the sizes, wrapping ErrOutOfMemory", err)
	}
	st, err := c.allocWaiting(1 << 20)
	if err != nil {
		t.Errorf("1 MiB after the refusal: %v", err)
	}
	runtime.KeepAlive(st)
}
