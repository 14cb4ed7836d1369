package array

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// anonHugeKB returns the process's anonymous memory in transparent huge
// pages, from /proc/self/smaps_rollup.
func anonHugeKB(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		t.Skipf("no smaps_rollup: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "AnonHugePages:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Skip("smaps_rollup has no AnonHugePages line")
	return 0
}

// TestLargeBuffersGetHugePages allocates a fresh 32 MiB buffer and wants
// some of it in huge pages, where the kernel's transparent huge pages honour
// madvise.
func TestLargeBuffersGetHugePages(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skipf("transparent huge pages are off here (%q, %v)", mode, err)
	}
	before := anonHugeKB(t)
	const n = 32 << 20
	s := AllocCPU(n)
	b := s.Bytes()
	for i := 0; i < n; i += 4096 {
		b[i] = 1
	}
	if got := anonHugeKB(t) - before; got < 2048 {
		t.Errorf("a fresh %d MiB buffer added %d KiB of huge pages, want at least one 2 MiB page", n>>20, got)
	}
	// odd sizes and alignments are advised without faults
	for _, words := range []int{1, 1<<18 + 3, 1<<19 - 1} {
		adviseHuge(make([]uint64, words))
	}
}
