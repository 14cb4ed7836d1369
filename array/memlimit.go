package array

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// ErrOutOfMemory is wrapped by the *Error of an allocation larger than the
// machine can give: errors.Is(err, array.ErrOutOfMemory) tells it apart
// from a bad argument.
var ErrOutOfMemory = errors.New("out of memory")

// checkedFrom is the size from which a fresh CPU allocation is checked
// against the memory the machine has free. Go cannot recover from running
// out of memory (the runtime ends the process, or the kernel's OOM killer
// does once the pages are touched), so an allocation that cannot fit must
// be refused before it is made. Reading the free memory costs little
// beside touching checkedFrom bytes of fresh pages (docs/performance.md).
const checkedFrom = 256 << 20

var physical = sync.OnceValue(physicalMemory)

// checkAlloc returns an *Error for op wrapping ErrOutOfMemory if n bytes
// cannot be allocated: more than the machine's memory, or, for large
// requests, more than is free even after the pool and the Go heap give
// their spare memory back.
func checkAlloc(op string, n int) *Error {
	total := physical()
	if int64(n) > total {
		return &Error{Op: op, Msg: fmt.Sprintf("%s is more than the machine's memory (%s)", formatBytes(int64(n)), formatBytes(total)), Err: ErrOutOfMemory}
	}
	if n < checkedFrom {
		return nil
	}
	free, ok := availableMemory()
	if !ok || int64(n) <= free {
		return nil
	}
	ClearCPUPool()
	runtime.GC()
	debug.FreeOSMemory()
	if free, ok = availableMemory(); ok && int64(n) > free {
		return &Error{Op: op, Msg: fmt.Sprintf("%s is more than the memory free (%s of %s)", formatBytes(int64(n)), formatBytes(free), formatBytes(total)), Err: ErrOutOfMemory}
	}
	return nil
}

// formatBytes writes a byte count in binary units ("1.5 GiB").
func formatBytes(n int64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/1024, 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.4g %ciB", v, units[i])
}
