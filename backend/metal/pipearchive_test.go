package metal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

func TestArchivePath(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == envPipelineCache {
				return v
			}
			return ""
		}
	}
	home := func() (string, error) { return "/home/u/.cache", nil }
	p, err := archivePath(env(""), home, "Apple M2 Pro")
	if err != nil || !strings.HasPrefix(p, "/home/u/.cache/fathom/pipelines-Apple_M2_Pro-") || !strings.HasSuffix(p, kernelsHash()+".metalarchive") {
		t.Errorf("default path %q, %v", p, err)
	}
	if p, err := archivePath(env("off"), home, "x"); p != "" || err != nil {
		t.Errorf("off: %q, %v", p, err)
	}
	if p, err := archivePath(env("/tmp/a"), home, "x"); err != nil || filepath.Dir(p) != "/tmp/a" {
		t.Errorf("set: %q, %v", p, err)
	}
	if _, err := archivePath(env("relative"), home, "x"); err == nil || !strings.Contains(err.Error(), envPipelineCache) {
		t.Errorf("a relative directory: %v", err)
	}
	nohome := func() (string, error) { return "", errors.New("no home") }
	if p, err := archivePath(env(""), nohome, "x"); p != "" || err != nil {
		t.Errorf("no cache directory: %q, %v", p, err)
	}
}

// TestPipeArchive runs the archive's bookkeeping with a fake serializer:
// additions are saved (atomically, by rename) once per flush, lookups
// counted, older archives of the GPU removed, and an oversized one
// started afresh.
func TestPipeArchive(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, archivePrefix("GPU")+kernelsHash()+".metalarchive")
	old := filepath.Join(dir, archivePrefix("GPU")+"0123456789abcdef.metalarchive")
	other := filepath.Join(dir, archivePrefix("Other GPU")+"0123456789abcdef.metalarchive")
	for _, f := range []string{old, other} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := prepareArchiveDir(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Error("the archive of older kernels was kept")
	}
	if _, err := os.Stat(other); err != nil {
		t.Error("another GPU's archive was removed")
	}
	saves := 0
	a := &pipeArchive{path: path, handle: unsafe.Pointer(&saves), save: func(h unsafe.Pointer, file string) error {
		saves++
		return os.WriteFile(file, []byte("archive"), 0o644)
	}}
	a.use(func(unsafe.Pointer) (bool, bool) { return true, false })
	if err := a.flush(); err != nil || saves != 0 {
		t.Errorf("a flush with nothing added saved %d times (%v)", saves, err)
	}
	a.use(func(unsafe.Pointer) (bool, bool) { return false, true })
	a.use(func(unsafe.Pointer) (bool, bool) { return false, true })
	if err := a.flush(); err != nil || saves != 1 {
		t.Errorf("%d saves after additions (%v), want 1", saves, err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "archive" {
		t.Errorf("archive file %q, %v", b, err)
	}
	if h, m := a.stats(); h != 1 || m != 2 {
		t.Errorf("stats %d hits %d misses", h, m)
	}
	a.save = func(unsafe.Pointer, string) error { return errors.New("disk full") }
	a.use(func(unsafe.Pointer) (bool, bool) { return false, true })
	if err := a.flush(); err == nil {
		t.Error("a failed save was not reported")
	}
	if m, _ := filepath.Glob(path + ".tmp-*"); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
	if err := os.WriteFile(path, make([]byte, archiveMaxBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := prepareArchiveDir(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Error("an archive above the size limit was kept")
	}
}
