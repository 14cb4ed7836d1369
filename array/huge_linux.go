package array

import (
	"syscall"
	"unsafe"
)

// hugeFrom is the size from which fresh CPU buffers ask for transparent
// huge pages: beyond the TLB's reach of 4 KiB pages, every page costs a
// page walk when a kernel streams through it, and touching a fresh 2 MiB
// page costs less than touching 512 small ones.
const hugeFrom = 4 << 20

// adviseHuge asks the kernel to back the 2 MiB-aligned part of buf with
// huge pages, as numpy does for its large arrays. It must come before
// buf's pages are first touched. Where transparent huge pages are off or
// the call fails, nothing changes.
func adviseHuge(buf []uint64) {
	const huge = 2 << 20
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(buf))), len(buf)*8)
	lo := int(-uintptr(unsafe.Pointer(unsafe.SliceData(b))) & (huge - 1))
	if n := (len(b) - lo) &^ (huge - 1); n > 0 {
		_ = syscall.Madvise(b[lo:lo+n], 14) // MADV_HUGEPAGE
	}
}
