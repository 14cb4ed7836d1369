package array_test

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/fathom-go/fathom/array"
)

// settle collects garbage until the cleanups that return dead arrays'
// buffers have run, so the examples' counts are their own.
func settle() {
	for last := int64(-1); last != array.ActiveMemory(); {
		last = array.ActiveMemory()
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
	}
}

// ExampleActiveMemory shows what the counters see of one buffer: a
// 1 MiB array is counted from its allocation, and the peak remembers it.
func ExampleActiveMemory() {
	settle()
	before := array.ActiveMemory()
	array.ResetPeakMemory()
	a := array.FromSlice(make([]float32, 256<<10)) // 1 MiB
	fmt.Println("active:", array.ActiveMemory()-before)
	fmt.Println("peak:", array.PeakMemory()-before)
	runtime.KeepAlive(a)
	// Output:
	// active: 1048576
	// peak: 1048576
}

// ExampleSetMemoryLimit bounds the memory arrays may hold: an allocation
// past the limit is an error wrapping ErrOutOfMemory, and smaller work
// still runs.
func ExampleSetMemoryLimit() {
	settle()
	prev := array.SetMemoryLimit(array.ActiveMemory() + 4<<20)
	defer array.SetMemoryLimit(prev)
	err := array.Try(func() { array.FromSlice(make([]float32, 2<<20)) }) // 8 MiB
	fmt.Println(errors.Is(err, array.ErrOutOfMemory))
	small := array.FromSlice(make([]float32, 256<<10)) // 1 MiB
	fmt.Println(small.Size())
	// Output:
	// true
	// 262144
}

// ExampleStorage_Fail shows what a backend does when device work that
// should have written memory failed (a GPU command buffer that timed
// out): it records the failure on the storage, and every Eval that reads
// the memory returns it, however many callers were waiting for the work.
func ExampleStorage_Fail() {
	st := array.AllocCPU(1 << 20)
	x := array.FromStorage(array.DefaultStream(array.CPU), []int{256 << 10}, array.Float32, st, []int{1}, 0)
	st.Fail(errors.New("GPU command buffer failed: timeout"))
	fmt.Println(x.Eval())
	_, err := array.ToSlice[float32](x)
	fmt.Println(err)
	// Output:
	// GPU command buffer failed: timeout
	// GPU command buffer failed: timeout
}
