package safetensors

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/fathom-go/fathom/encoding/internal/tensortest"

	"golang.org/x/sys/unix"

	"github.com/fathom-go/fathom/array"
)

// resident returns how many of the file's pages are in the page cache.
func resident(t *testing.T, path string) (in, total int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	b, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(b)
	page := os.Getpagesize()
	vec := make([]byte, (len(b)+page-1)/page)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Skip("mincore:", errno)
	}
	for _, v := range vec {
		if v&1 != 0 {
			in++
		}
	}
	return in, len(vec)
}

// evict drops the file's pages from the page cache.
func evict(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Skip("fadvise:", err)
	}
}

// TestGetReadsOnlyItsTensor: opening a 64 MB file and evaluating a small
// tensor at its end brings a few pages into memory, not the file.
func TestGetReadsOnlyItsTensor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.safetensors")
	big := array.FromSlice(make([]float32, 16<<20))    // 64 MB, stored first
	small := tensortest.Fill(array.Float16, []int{10}) // after it
	if err := Save(path, map[string]*array.Array{"big": big, "small": small}, nil); err != nil {
		t.Fatal(err)
	}
	evict(t, path)
	if in, total := resident(t, path); in > total/10 {
		t.Skipf("the page cache keeps %d of %d pages after FADV_DONTNEED (tmpfs?)", in, total)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, err := f.Get("small")
	if err != nil {
		t.Fatal(err)
	}
	if !same(t, a, small) {
		t.Fatal("wrong values")
	}
	in, total := resident(t, path)
	t.Logf("%d of %d pages resident after Open, Get and Eval of a 20-byte tensor", in, total)
	if in > 64 {
		t.Errorf("%d pages (%d KiB) of the file were read for a 20-byte tensor", in, in*os.Getpagesize()>>10)
	}
}
