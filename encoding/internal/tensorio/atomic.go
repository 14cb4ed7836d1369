package tensorio

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
)

// WrapTempWriter, when set (by tests), wraps the writer of every temporary
// file WriteFileAtomic writes, so a test can make the write fail part-way
// as a full disk would.
var WrapTempWriter func(io.Writer) io.Writer

// WriteFileAtomic replaces the file at path with what write writes, or
// leaves it as it was. It writes a temporary file in path's directory,
// syncs it to disk, renames it over path (which, on every platform Go
// supports, either happens whole or not at all) and syncs the directory.
// If write or any step fails, the temporary file is removed and the error
// returned; the old file is untouched. A path that is a symbolic link
// has its target replaced. A new file gets mode 0644; a replaced one
// keeps its mode.
func WriteFileAtomic(path string, write func(w io.Writer) error) (err error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if target, err := filepath.EvalSymlinks(path); err == nil {
			path = target
		}
	}
	perm := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		perm = fi.Mode().Perm()
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	var w io.Writer = f
	if WrapTempWriter != nil {
		w = WrapTempWriter(w)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil && runtime.GOOS != "windows" {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable. Windows cannot open a directory
// for syncing; there the rename is as durable as the file system makes it.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	// Some file systems cannot sync a directory; the file is already in
	// place and synced.
	if errors.Is(err, errors.ErrUnsupported) {
		return nil
	}
	return err
}
