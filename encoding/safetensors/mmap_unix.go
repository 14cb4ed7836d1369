//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package safetensors

import (
	"math"
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the file read-only, or returns nil (the file is then read
// with ReadAt): for an empty file, one too large for the address space,
// or a mapping the system refuses. Readahead is turned off (MADV_RANDOM):
// evaluating one small tensor reads its pages, not the megabytes after it;
// reads of whole tensors ask for their range ahead (willNeed).
func mapFile(f *os.File, size int64) []byte {
	if size <= 0 || size > math.MaxInt {
		return nil
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil
	}
	unix.Madvise(b, unix.MADV_RANDOM)
	return b
}

func unmap(b []byte) error { return unix.Munmap(b) }

// willNeed asks the kernel to read data[lo:hi] (data is the whole
// mapping, which starts on a page) ahead of the copy that follows, when
// the range is large enough for it to matter.
func willNeed(data []byte, lo, hi int64) {
	if hi-lo < 1<<20 {
		return
	}
	lo &^= int64(os.Getpagesize() - 1)
	unix.Madvise(data[lo:hi], unix.MADV_WILLNEED)
}
