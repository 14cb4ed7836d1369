package metal

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// Compiled pipelines are kept across runs in a Metal binary archive
// (MTLBinaryArchive, macOS 11 and later): a pipeline found there skips
// the GPU compiler's back end, which is most of a pipeline's cost; a
// library is still compiled from MSL at its first use in a process (a
// unit at a time, see units.go). The archive lives in
// FATHOM_METAL_PIPELINE_CACHE (default: the user's cache directory),
// one file per GPU and version of the embedded kernels, and is saved
// shortly after pipelines were added to it.

// envPipelineCache is the directory of the pipeline archive, or "off".
const envPipelineCache = "FATHOM_METAL_PIPELINE_CACHE"

// archiveMaxBytes bounds the archive file: generated (fused) kernels
// accumulate in it across programs, so a larger file is started afresh.
const archiveMaxBytes = 256 << 20

// archiveSaveDelay is how long after a pipeline is added the archive is
// saved, so that the pipelines of a program's first steps are written
// once.
const archiveSaveDelay = 2 * time.Second

// archivePath returns the file of the pipeline archive for the GPU named
// device, or "" if the archive is off. getenv reads the environment;
// cacheDir is os.UserCacheDir.
func archivePath(getenv func(string) string, cacheDir func() (string, error), device string) (string, error) {
	dir := getenv(envPipelineCache)
	switch dir {
	case "off":
		return "", nil
	case "":
		d, err := cacheDir()
		if err != nil {
			return "", nil // no cache directory: no archive
		}
		dir = filepath.Join(d, "fathom")
	default:
		if !filepath.IsAbs(dir) {
			return "", fmt.Errorf("%s=%q is not an absolute directory (or \"off\")", envPipelineCache, dir)
		}
	}
	return filepath.Join(dir, archivePrefix(device)+kernelsHash()+".metalarchive"), nil
}

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// archivePrefix starts the archive file names of a GPU.
func archivePrefix(device string) string {
	return "pipelines-" + strings.Trim(unsafeFileChars.ReplaceAllString(device, "_"), "_") + "-"
}

// kernelsHash identifies the embedded kernels: a new version of them
// starts a new archive (and removes the old one).
var kernelsHash = sync.OnceValue(func() string {
	h := sha256.New()
	libs, pre := libraries()
	h.Write([]byte(pre))
	for _, n := range libraryNames() {
		fmt.Fprintf(h, "%s\x00%d\x00%s", n, len(libs[n]), libs[n])
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
})

// pipeArchive is the archive of a device: a handle the driver looks
// pipelines up in and adds them to, saved to path after additions.
type pipeArchive struct {
	path string
	// save serializes the archive to a file.
	save func(handle unsafe.Pointer, file string) error

	mu      sync.Mutex // the archive is used by one call at a time
	handle  unsafe.Pointer
	dirty   bool
	timer   *time.Timer
	saveErr error
	hits    int
	misses  int
}

// prepareArchiveDir creates the archive's directory and removes the
// archives of older kernels of the same GPU, and a file grown past
// archiveMaxBytes.
func prepareArchiveDir(path string) error {
	dir, file := filepath.Split(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	prefix := file[:strings.LastIndexByte(file, '-')+1]
	old, _ := filepath.Glob(filepath.Join(dir, prefix+"*.metalarchive"))
	for _, o := range old {
		if o != path {
			os.Remove(o)
		}
	}
	if st, err := os.Stat(path); err == nil && st.Size() > archiveMaxBytes {
		os.Remove(path)
	}
	return nil
}

// use runs f with the archive's handle, serialized with saves; f reports
// whether it found a pipeline (hit) and whether it added one.
func (a *pipeArchive) use(f func(handle unsafe.Pointer) (hit, added bool)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	hit, added := f(a.handle)
	if hit {
		a.hits++
	} else {
		a.misses++
	}
	if added {
		a.dirty = true
		if a.timer == nil {
			a.timer = time.AfterFunc(archiveSaveDelay, func() { a.flush() })
		}
	}
}

// flush saves the archive if pipelines were added since it was last
// saved: to a temporary file renamed over the archive, so a concurrent
// reader (another process) sees a whole archive or the old one.
func (a *pipeArchive) flush() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.timer = nil
	if !a.dirty {
		return a.saveErr
	}
	a.dirty = false
	tmp := fmt.Sprintf("%s.tmp-%d", a.path, os.Getpid())
	err := a.save(a.handle, tmp)
	if err == nil {
		err = os.Rename(tmp, a.path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	a.saveErr = err
	return err
}

// stats returns the lookups that found their pipeline in the archive and
// those that compiled it.
func (a *pipeArchive) stats() (hits, misses int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.hits, a.misses
}
