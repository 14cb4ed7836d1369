package array

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// vmFlags returns the VmFlags of the mapping in /proc/self/smaps that
// holds addr.
func vmFlags(t *testing.T, addr uintptr) []string {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.Fields(line)[1:]
		}
	}
	t.Fatalf("no mapping in /proc/self/smaps holds %#x", addr)
	return nil
}

// TestLargeBuffersGetHugePages allocates a fresh 32 MiB buffer and wants
// the mapping of its 2 MiB-aligned part advised for huge pages (VmFlags
// "hg"). Unlike a count of huge pages in use, the flag does not depend
// on the machine's transparent-huge-page mode or on what the process did
// before.
func TestLargeBuffersGetHugePages(t *testing.T) {
	ClearCPUPool()
	const n = 32 << 20
	s := AllocCPU(n)
	b := s.Bytes()
	lo, size := hugeRange(uintptr(unsafe.Pointer(&b[0])), n)
	if size == 0 {
		t.Fatalf("a %d MiB buffer holds no whole huge page", n>>20)
	}
	if flags := vmFlags(t, uintptr(unsafe.Pointer(&b[lo]))); !slices.Contains(flags, "hg") {
		t.Errorf("the aligned part of a fresh %d MiB buffer is not advised for huge pages: VmFlags %v", n>>20, flags)
	}
}

// TestHugeRange checks the whole huge pages found inside buffers of odd
// sizes and alignments: aligned, inside the buffer, and all of them.
func TestHugeRange(t *testing.T) {
	for _, c := range []struct {
		addr     uintptr
		n        int
		lo, size int
	}{
		{0x200000, 4 << 20, 0, 4 << 20},
		{0x200008, 4 << 20, hugePage - 8, 2 << 20},
		{0x1ff000, 4<<20 + 0x1000, 0x1000, 4 << 20},
		{0x200001, hugePage, 0, 0},
		{0x3fffff, 1, 0, 0},
		{0x400000, 8, 0, 0},
	} {
		lo, size := hugeRange(c.addr, c.n)
		if lo != c.lo || size != c.size {
			t.Errorf("hugeRange(%#x, %d) = %d, %d, want %d, %d", c.addr, c.n, lo, size, c.lo, c.size)
		}
		if size > 0 && ((c.addr+uintptr(lo))%hugePage != 0 || lo+size > c.n) {
			t.Errorf("hugeRange(%#x, %d) = %d, %d: not aligned or not inside", c.addr, c.n, lo, size)
		}
	}
}
