package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/encoding/npy"
	"github.com/fathom-go/fathom/encoding/safetensors"
	"github.com/fathom-go/fathom/internal/workload"
)

// fileBytes is the size of the save and load benchmarks: 256 MiB of
// float32.
const fileBytes = 256 << 20

// BenchmarkFiles saves and loads 256 MiB of float32 as safetensors and as
// .npy, next to os.WriteFile and os.ReadFile of the same number of bytes
// (the plain file system's speed, which a format can at best match).
// Saves are atomic: they also sync the file to disk and rename it, which
// WriteFile does not; WriteFileSync is WriteFile plus that sync.
//
//	go test ./bench -run '^$' -bench Files -count 5
//
// Writes measure the disk as much as the code: FATHOM_BENCH_DIR=/dev/shm
// puts the files on a tmpfs to measure the code alone.
func BenchmarkFiles(b *testing.B) {
	dir := benchDir(b)
	x := array.FromSlice(workload.RandF32(fileBytes/4, 1), fileBytes/4)
	raw := make([]byte, fileBytes)
	for i := range raw {
		raw[i] = byte(i * 7)
	}
	st := filepath.Join(dir, "x.safetensors")
	np := filepath.Join(dir, "x.npy")
	plain := filepath.Join(dir, "x.bin")
	tensors := map[string]*array.Array{"x": x}

	b.Run("safetensors.Save", func(b *testing.B) {
		b.SetBytes(fileBytes)
		for b.Loop() {
			if err := safetensors.Save(st, tensors, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("npy.SaveFile", func(b *testing.B) {
		b.SetBytes(fileBytes)
		for b.Loop() {
			if err := npy.SaveFile(np, x); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("os.WriteFile", func(b *testing.B) {
		b.SetBytes(fileBytes)
		for b.Loop() {
			if err := os.WriteFile(plain, raw, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("os.WriteFileSync", func(b *testing.B) {
		b.SetBytes(fileBytes)
		for b.Loop() {
			f, err := os.Create(plain)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.Write(raw); err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
	b.Run("safetensors.Load", func(b *testing.B) {
		b.SetBytes(fileBytes)
		for b.Loop() {
			m, _, err := safetensors.Load(st)
			if err != nil {
				b.Fatal(err)
			}
			if m["x"].Size() != fileBytes/4 {
				b.Fatal("wrong size")
			}
		}
	})
	b.Run("npy.LoadFile", func(b *testing.B) {
		b.SetBytes(fileBytes)
		for b.Loop() {
			a, err := npy.LoadFile(np)
			if err != nil {
				b.Fatal(err)
			}
			if a.Size() != fileBytes/4 {
				b.Fatal("wrong size")
			}
		}
	})
	b.Run("os.ReadFile", func(b *testing.B) {
		b.SetBytes(fileBytes)
		for b.Loop() {
			d, err := os.ReadFile(plain)
			if err != nil {
				b.Fatal(err)
			}
			if len(d) != fileBytes {
				b.Fatal("wrong size")
			}
		}
	})
}

// BenchmarkSafetensorsOpenGet opens a 1 GiB safetensors file, evaluates
// its one small tensor (stored after the large one) and closes the file:
// the lazy path, which reads the header and a few pages, not the file.
//
//	go test ./bench -run '^$' -bench SafetensorsOpenGet
func BenchmarkSafetensorsOpenGet(b *testing.B) {
	path := filepath.Join(benchDir(b), "big.safetensors")
	big := array.FromSlice(make([]float32, 1<<28), 1<<14, 1<<14) // 1 GiB
	small := array.FromSlice([]float32{1, 2, 3, 4}, 2, 2)
	if err := safetensors.Save(path, map[string]*array.Array{"a.big": big, "z.small": small}, nil); err != nil {
		b.Fatal(err)
	}
	big = nil
	for b.Loop() {
		f, err := safetensors.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		a, err := f.Get("z.small")
		if err != nil {
			b.Fatal(err)
		}
		v, err := array.ToSlice[float32](a)
		if err != nil || v[3] != 4 {
			b.Fatal(v, err)
		}
		f.Close()
	}
}

// benchDir returns a fresh directory for the files of one benchmark, in
// FATHOM_BENCH_DIR if set.
func benchDir(b *testing.B) string {
	root := os.Getenv("FATHOM_BENCH_DIR")
	if root == "" {
		return b.TempDir()
	}
	dir, err := os.MkdirTemp(root, "fathom-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
