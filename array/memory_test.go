package array

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/fathom-go/fathom/internal/strided"
)

// settle collects garbage until ActiveMemory stops changing, so that the
// buffers earlier tests dropped are back and a test sees only its own.
func settle(t *testing.T) int64 {
	t.Helper()
	last := int64(-1)
	for range 200 {
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
		a := ActiveMemory()
		if a == last {
			return a
		}
		last = a
	}
	t.Fatal("ActiveMemory did not settle")
	return 0
}

// awaitActive waits for the cleanups of dropped buffers to bring
// ActiveMemory to want.
func awaitActive(t *testing.T, want int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for ActiveMemory() != want {
		if time.Now().After(deadline) {
			t.Fatalf("ActiveMemory %d, want %d after a collection", ActiveMemory(), want)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

func TestActiveMemoryCountsSizeClasses(t *testing.T) {
	base := settle(t)
	cpu0 := DeviceMemory(CPU).Active
	ResetPeakMemory()
	if got := PeakMemory(); got != base {
		t.Errorf("after ResetPeakMemory, PeakMemory %d, want ActiveMemory %d", got, base)
	}
	for _, c := range []struct {
		n, counted int
	}{
		{1 << 20, 1 << 20},         // a class of its own
		{1000000, 1 << 20},         // rounded up to its class
		{5 << 20, 5 << 20},         // a quarter step: 4 MiB + 1 MiB
		{4097, 5 << 10},            // the smallest pooled class
		{MaxUnpooled, 0},           // left to the Go allocator, not counted
		{100, 0},                   // likewise
		{0, 0},                     // no memory at all
		{3<<20 + 1, 3<<20 + 1<<19}, // steps of 512 KiB between 2 and 4 MiB
	} {
		s := AllocCPU(c.n)
		if got := ActiveMemory() - base; got != int64(c.counted) {
			t.Errorf("AllocCPU(%d): ActiveMemory rose by %d, want %d", c.n, got, c.counted)
		}
		if got := DeviceMemory(CPU).Active - cpu0; got != int64(c.counted) {
			t.Errorf("AllocCPU(%d): the CPU's Active rose by %d, want %d", c.n, got, c.counted)
		}
		if len(s.Bytes()) != c.n {
			t.Errorf("AllocCPU(%d) has %d bytes", c.n, len(s.Bytes()))
		}
		runtime.KeepAlive(s)
		s = nil
		awaitActive(t, base)
	}
	if got, want := PeakMemory(), base+5<<20; got != want {
		t.Errorf("PeakMemory %d, want %d: the largest buffer held", got, want)
	}
	if got, want := DeviceMemory(CPU).Peak, cpu0+5<<20; got != want {
		t.Errorf("the CPU's Peak %d, want %d", got, want)
	}
	ResetPeakMemory()
	if got := PeakMemory(); got != base {
		t.Errorf("PeakMemory %d after ResetPeakMemory, want %d", got, base)
	}
	if got := DeviceMemory(GPU); got.Active != 0 || got.Peak != 0 || got.Cache != 0 {
		t.Errorf("the GPU's counters are %+v without a GPU", got)
	}
}

func TestCacheMemoryAndLimits(t *testing.T) {
	prev := SetCacheLimit(1 << 30)
	t.Cleanup(func() { SetCacheLimit(prev) })
	settle(t)
	ClearCache()
	if got := CacheMemory(); got != 0 {
		t.Fatalf("CacheMemory %d after ClearCache", got)
	}
	s1, s2 := AllocCPU(1<<20), AllocCPU(2<<20)
	runtime.KeepAlive(s1)
	runtime.KeepAlive(s2)
	s1, s2 = nil, nil
	deadline := time.Now().Add(5 * time.Second)
	for CacheMemory() != 3<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("CacheMemory %d, want the two dropped buffers' %d", CacheMemory(), 3<<20)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if got := DeviceMemory(CPU).Cache; got != 3<<20 {
		t.Errorf("the CPU's Cache %d, want %d", got, 3<<20)
	}
	// lowering the limit drops the buffer freed first
	if got := SetCacheLimit(2 << 20); got != 1<<30 {
		t.Errorf("SetCacheLimit returned %d, want the previous 1 GiB", got)
	}
	if got := CacheMemory(); got != 2<<20 {
		t.Errorf("CacheMemory %d under a 2 MiB limit, want the newer buffer's %d", got, 2<<20)
	}
	SetCacheLimit(0)
	if got := CacheMemory(); got != 0 {
		t.Errorf("CacheMemory %d with caching off", got)
	}
	if err := Try(func() { SetCacheLimit(-1) }); err == nil {
		t.Error("SetCacheLimit(-1) did not panic")
	}
	if err := Try(func() { SetMemoryLimit(-1) }); err == nil {
		t.Error("SetMemoryLimit(-1) did not panic")
	}
}

func TestMemoryLimitCollectsThenRefuses(t *testing.T) {
	base := settle(t)
	prev := SetMemoryLimit(base + 8<<20)
	t.Cleanup(func() { SetMemoryLimit(prev) })
	if got := SetMemoryLimit(base + 8<<20); got != base+8<<20 {
		t.Errorf("SetMemoryLimit returned %d, want the limit just set", got)
	}
	// a dead 6 MiB buffer is collected to make room for the next one
	for range 3 {
		s := AllocCPU(6 << 20)
		runtime.KeepAlive(s)
	}
	keep := AllocCPU(6 << 20)
	err := Try(func() { AllocCPU(4 << 20) })
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("an allocation past the limit: %v; want an *Error wrapping ErrOutOfMemory", err)
	}
	for _, want := range []string{"4 MiB requested", "6 MiB active", "memory limit of"} {
		if !strings.Contains(e.Msg, want) {
			t.Errorf("error %q does not say %q", e.Msg, want)
		}
	}
	if got := ActiveMemory(); got != base+6<<20 {
		t.Errorf("ActiveMemory %d after the refusal, want %d", got, base+6<<20)
	}
	if got := CacheMemory(); got != 0 {
		t.Errorf("the refusal left %d bytes cached", got)
	}
	s := AllocCPU(2 << 20)
	runtime.KeepAlive(s)
	runtime.KeepAlive(keep)
}

// storageArray returns a 1-D float32 array over st.
func storageArray(st *Storage, n int) *Array {
	return FromStorage(CurrentStream(), []int{n}, Float32, st, strided.RowMajor([]int{n}), 0)
}

func TestTransientStorageGoesBackAtOnce(t *testing.T) {
	const n = 64 << 10
	base := settle(t)
	st := AllocCPU(4 * n)
	addr := unsafe.Pointer(&st.Bytes()[0])
	x := storageArray(st, n)
	HoldTransient(x, nil)
	v := storageArray(st, n) // a view of x
	HoldTransient(v, []*Array{x})
	DropTransient(x)
	if got := ActiveMemory(); got != base+4*n {
		t.Fatalf("ActiveMemory %d while a view holds the buffer, want %d", got, base+4*n)
	}
	hits := CPUPoolStats().Hits
	DropTransient(v)
	if got := ActiveMemory(); got != base {
		t.Errorf("ActiveMemory %d after the last holder dropped it, want %d", got, base)
	}
	again := AllocCPU(4 * n)
	if unsafe.Pointer(&again.Bytes()[0]) != addr || CPUPoolStats().Hits != hits+1 {
		t.Error("the next allocation of the class did not reuse the buffer")
	}
	DropTransient(v) // a second drop changes nothing
	if got := ActiveMemory(); got != base+4*n {
		t.Errorf("ActiveMemory %d after a repeated drop, want %d", got, base+4*n)
	}
	runtime.KeepAlive(again)
}

func TestEscapedStorageIsNotFreedEarly(t *testing.T) {
	const n = 64 << 10
	base := settle(t)
	st := AllocCPU(4 * n)
	x := storageArray(st, n)
	HoldTransient(x, nil)
	out := storageArray(st, n) // an output of the trace sharing x's buffer
	EscapeTransient(out)
	DropTransient(x)
	if got := ActiveMemory(); got != base+4*n {
		t.Errorf("ActiveMemory %d: an escaped buffer was freed", got)
	}
	// a view of memory nobody made transient (an input) is not tracked
	in := storageArray(AllocCPU(4*n), n)
	view := storageArray(in.Storage(), n)
	HoldTransient(view, []*Array{in})
	DropTransient(view)
	if got := ActiveMemory(); got != base+8*n {
		t.Errorf("ActiveMemory %d: an input's buffer was freed through a view", got)
	}
	// small buffers are not pooled, so never tracked
	small := storageArray(AllocCPU(64), 16)
	HoldTransient(small, nil)
	DropTransient(small)
	if got := len(small.Storage().Bytes()); got != 64 {
		t.Errorf("a small buffer has %d bytes after a drop, want 64", got)
	}
	runtime.KeepAlive(out)
	runtime.KeepAlive(in)
}
