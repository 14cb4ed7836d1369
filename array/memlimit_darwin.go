package array

import (
	"math"

	"golang.org/x/sys/unix"
)

func physicalMemory() int64 {
	if n, err := unix.SysctlUint64("hw.memsize"); err == nil && n > 0 && n < math.MaxInt64 {
		return int64(n)
	}
	return math.MaxInt64
}

// availableMemory is unknown on macOS, whose compressor and swap make
// "free" a poor bound; only the physical size is checked.
func availableMemory() (int64, bool) { return 0, false }
