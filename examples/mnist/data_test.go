package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// mnistData loads the data set once for all the tests.
var mnistData = sync.OnceValues(func() ([2]dataset, error) {
	dir, err := findData()
	if err != nil {
		return [2]dataset{}, err
	}
	train, test, err := loadMNIST(dir)
	return [2]dataset{train, test}, err
})

func loadForTest(t *testing.T) (train, test dataset) {
	t.Helper()
	d, err := mnistData()
	if err != nil {
		t.Fatal(err)
	}
	return d[0], d[1]
}

// setFacts are what testdata/gen_mnist.py reads from the files with numpy.
type setFacts struct {
	Count        int     `json:"count"`
	FirstLabels  []int32 `json:"first_labels"`
	LabelCounts  []int   `json:"label_counts"`
	Image0Row14  []uint8 `json:"image0_row14"`
	PixelSums    []int   `json:"pixel_sums"`
	LastLabel    int32   `json:"last_label"`
	LastPixelSum int     `json:"last_pixel_sum"`
}

func TestLoadMNIST(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "mnist_ref.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct{ Train, Test setFacts }
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	train, test := loadForTest(t)
	if ref.Train.FirstLabels[0] != 5 {
		t.Fatalf("the reference's first training label is %d: regenerate testdata", ref.Train.FirstLabels[0])
	}
	for _, c := range []struct {
		name string
		d    dataset
		want setFacts
	}{{"train", train, ref.Train}, {"test", test, ref.Test}} {
		n := c.want.Count
		if got := c.d.images.Shape(); !slices.Equal(got, []int{n, 784}) || c.d.images.DType() != array.Uint8 {
			t.Errorf("%s images: %v %v, want uint8 [%d 784]", c.name, c.d.images.DType(), got, n)
		}
		if got := c.d.labels.Shape(); !slices.Equal(got, []int{n}) || c.d.labels.DType() != array.Int32 {
			t.Errorf("%s labels: %v %v, want int32 [%d]", c.name, c.d.labels.DType(), got, n)
		}
		labels, err := array.ToSlice[int32](c.d.labels)
		if err != nil {
			t.Fatal(err)
		}
		counts := make([]int, 10)
		for i, l := range labels {
			if l < 0 || l > 9 {
				t.Fatalf("%s label %d is %d", c.name, i, l)
			}
			counts[l]++
		}
		if !slices.Equal(counts, c.want.LabelCounts) {
			t.Errorf("%s: %v examples of each digit, want %v", c.name, counts, c.want.LabelCounts)
		}
		if got := labels[:len(c.want.FirstLabels)]; !slices.Equal(got, c.want.FirstLabels) {
			t.Errorf("%s: first labels %v, want %v", c.name, got, c.want.FirstLabels)
		}
		if labels[n-1] != c.want.LastLabel {
			t.Errorf("%s: last label %d, want %d", c.name, labels[n-1], c.want.LastLabel)
		}
		row, err := array.ToSlice[uint8](ops.SliceAxis(c.d.images, 1, ops.R(14*28, 15*28)))
		if err != nil {
			t.Fatal(err)
		}
		if got := row[:28]; !slices.Equal(got, c.want.Image0Row14) {
			t.Errorf("%s: row 14 of image 0 is %v, want %v", c.name, got, c.want.Image0Row14)
		}
		sums, err := array.ToSlice[int32](ops.Sum(ops.AsType(c.d.images, array.Int32), 1))
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range c.want.PixelSums {
			if int(sums[i]) != want {
				t.Errorf("%s: image %d's pixels sum to %d, want %d", c.name, i, sums[i], want)
			}
		}
		if int(sums[n-1]) != c.want.LastPixelSum {
			t.Errorf("%s: the last image's pixels sum to %d, want %d", c.name, sums[n-1], c.want.LastPixelSum)
		}
	}
}

func TestSubset(t *testing.T) {
	train, _ := loadForTest(t)
	s := train.subset(100)
	if s.size() != 100 || !slices.Equal(s.images.Shape(), []int{100, 784}) {
		t.Fatalf("subset of 100: %d labels, images %v", s.size(), s.images.Shape())
	}
	if l := ops.SliceAxis(s.labels, 0, ops.R(0, 1)).Item(); l != 5 {
		t.Errorf("the subset's first label is %v, want 5", l)
	}
	if all := train.subset(0); all.size() != trainSize {
		t.Errorf("subset 0 has %d examples, want all %d", all.size(), trainSize)
	}
}

// TestFindDataMissing checks the error when the module cache lacks the
// data: it names the module, how to get it and where it looked.
func TestFindDataMissing(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("GOMODCACHE", empty)
	t.Setenv("GOPATH", empty)
	t.Setenv("GOPROXY", "off") // go list must not download anything
	_, err := findData()
	if err == nil {
		t.Fatal("findData found the data in an empty module cache")
	}
	for _, want := range []string{mnistModule, "go mod download", "-data", "go list -m"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not mention %q: %v", want, err)
		}
	}
}

func TestLoadBadFolder(t *testing.T) {
	dir := t.TempDir()
	_, _, err := loadMNIST(dir)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, trainImages)) {
		t.Fatalf("loading an empty folder: %v, want an error naming %s", err, trainImages)
	}
	if err := os.WriteFile(filepath.Join(dir, trainImages), []byte("not gzip"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = loadMNIST(dir)
	if err == nil || !strings.Contains(err.Error(), trainImages) {
		t.Fatalf("loading a corrupt file: %v, want an error naming %s", err, trainImages)
	}
}
