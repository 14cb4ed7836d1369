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

// hugePage is the size of a transparent huge page on amd64 and arm64.
const hugePage = 2 << 20

// adviseHuge asks the kernel to back the 2 MiB-aligned part of buf with
// huge pages, as numpy does for its large arrays. It must come before
// buf's pages are first touched. Where transparent huge pages are off or
// the call fails, nothing changes.
func adviseHuge(buf []uint64) {
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(buf))), len(buf)*8)
	if lo, n := hugeRange(uintptr(unsafe.Pointer(unsafe.SliceData(b))), len(b)); n > 0 {
		_ = syscall.Madvise(b[lo:lo+n], syscall.MADV_HUGEPAGE)
	}
}

// hugeRange returns the whole huge pages within the n bytes at addr: they
// start lo bytes in and take size bytes, a multiple of hugePage.
func hugeRange(addr uintptr, n int) (lo, size int) {
	lo = int(-addr & (hugePage - 1))
	if lo < n {
		size = (n - lo) &^ (hugePage - 1)
	}
	if size == 0 {
		return 0, 0
	}
	return lo, size
}
