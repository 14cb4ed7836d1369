//go:build unix

package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/distributed"
	"github.com/fathom-go/fathom/internal/mpitest"
	"github.com/fathom-go/fathom/nn"
)

// distArgs is a short run for the data-parallel tests: 10 steps an epoch,
// so that 20 steps cross an epoch (a new data order and the learning
// rate's decay) and score the test set twice.
var distArgs = []string{"-hidden", "32", "-batch", "64", "-train-subset", "640", "-test-subset", "200", "-eval-batch", "100", "-steps", "20", "-epochs", "2"}

// Environment of the processes TestDistributedMatchesSingle starts under
// mpirun: the run's flags, separated by spaces, and the checkpoint
// folder process 0 writes.
const (
	rankArgsEnv = "FATHOM_MNIST_RANK_ARGS"
	rankSaveEnv = "FATHOM_MNIST_RANK_SAVE"
)

// TestDistributedSize1: -distributed outside mpirun is a job of one
// process, whose step (the sharded step, with the identity for its
// all-reduces) computes what CompileStep's does: the same parameters,
// bit for bit.
func TestDistributedSize1(t *testing.T) {
	if mpitest.UnderMPI() {
		t.Skip("a rank of a job; TestDistributedMatchesSingle runs the job")
	}
	single := trainForTest(t, distArgs...)
	dist := trainForTest(t, append([]string{"-distributed"}, distArgs...)...)
	if _, ok := dist.step.(*shardedStep); !ok {
		t.Fatalf("-distributed trained with a %T, want the sharded step", dist.step)
	}
	want, got := nn.Parameters(single.model), nn.Parameters(dist.model)
	for _, name := range slices.Sorted(maps.Keys(want)) {
		w, _ := array.ToSlice[float32](want[name])
		g, _ := array.ToSlice[float32](got[name])
		if !slices.Equal(g, w) {
			t.Errorf("%s differs from the single-process run's", name)
		}
	}
	if diff := cmp.Diff(single.prog, dist.prog); diff != "" {
		t.Errorf("progress (-single +distributed):\n%s", diff)
	}
}

// TestDistributedRank is a process of a job TestDistributedMatchesSingle
// starts: it runs the program with the flags it is given.
func TestDistributedRank(t *testing.T) {
	args := os.Getenv(rankArgsEnv)
	if !mpitest.UnderMPI() || args == "" {
		t.Skip("run by TestDistributedMatchesSingle under mpirun")
	}
	cfg, err := parseArgs(append(strings.Fields(args), "-distributed", "-quiet", "-plot", "", "-save", os.Getenv(rankSaveEnv)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	tr, err := run(cfg, &out)
	if err != nil {
		t.Fatalf("mnist: %v", err)
	}
	tr.release()
	g, err := distributed.Init()
	if err != nil {
		t.Fatal(err)
	}
	// only process 0 reports
	if (g.Rank() == 0) != strings.Contains(out.String(), "test accuracy") {
		t.Errorf("process %d of %d printed %q", g.Rank(), g.Size(), out.String())
	}
	if err := distributed.Finalize(); err != nil {
		t.Fatal(err)
	}
}

// TestDistributedMatchesSingle runs short runs data-parallel under
// mpirun, the MLP with 2 and 4 processes on this machine and the CNN with
// 2, and compares the parameters process 0 saves with a single-process
// run's of the same steps.
//
// They differ only by the order of the sums: the gradient of a batch is
// summed over its rows in shards, then over the processes, so each
// gradient is rounded differently, by about float32's epsilon relative to
// its terms. Adam's step is at most about the learning rate (1e-3, then
// 5e-4) whatever the gradient's size, and changes by about the gradient's
// relative rounding (where the gradient is far from Adam's eps), so 20
// steps drift by a few float32 ulps of the parameters (about 0.1 in size):
// 7e-8 (the MLP) and 1.1e-7 (the CNN) were the largest differences seen.
// The tolerance, 1e-6, is far above that and far below what a wrong
// shard, a missing average or a step on part of the batch does: a
// single-process run on half the batch is checked to differ by more than
// 50 times the tolerance (the MLP's differs by 2e-2), and leaving out the
// average, or giving every process the first shard, made the MLP's
// parameters differ by 2e-2.
func TestDistributedMatchesSingle(t *testing.T) {
	mpirun := mpitest.Need(t)
	const tol = 1e-6
	data := writeShortData(t)
	for _, c := range []struct {
		model string
		args  []string // 10 steps an epoch, 20 in all
		nps   []int
	}{
		{"mlp", distArgs, []int{2, 4}},
		{"cnn", []string{"-model", "cnn", "-batch", "32", "-train-subset", "320", "-test-subset", "200", "-eval-batch", "100", "-steps", "20", "-epochs", "2"}, []int{2}},
	} {
		single := trainForTest(t, c.args...)
		half := trainForTest(t, append(slices.Clone(c.args), "-batch", strconv.Itoa(single.cfg.batch/2))...)
		d := maxParamDiff(t, nn.Parameters(single.model), nn.Parameters(half.model))
		if d < 50*tol {
			t.Fatalf("%s: a run on half the batch differs by only %g from the full batch's: the tolerance %g could not tell them apart", c.model, d, tol)
		}
		for _, np := range c.nps {
			t.Run(fmt.Sprintf("%s/np=%d", c.model, np), func(t *testing.T) {
				dir := t.TempDir()
				env := []string{rankArgsEnv + "=" + strings.Join(append(slices.Clone(c.args), "-data", data), " "), rankSaveEnv + "=" + dir}
				out, err, took := mpitest.Launch(mpirun, np, time.Minute, env, "-test.run=^TestDistributedRank$", "-test.v")
				if err != nil || strings.Count(out, "--- PASS: TestDistributedRank") != np {
					t.Fatalf("mpirun -np %d: %v after %v\n%s", np, err, took, out)
				}
				t.Logf("mpirun -np %d: 20 steps in %v", np, took.Round(time.Millisecond))
				compareRuns(t, single, dir, c.args, tol)
			})
		}
	}
}

// compareRuns compares the checkpoint in dir, of a run with args, with
// the single-process run single: the parameters within tol, the losses
// and the test accuracies.
func compareRuns(t *testing.T, single *trainer, dir string, args []string, tol float64) {
	t.Helper()
	// the checkpoint, read as a run to resume: its parameters and progress
	cfg, err := parseArgs(append(slices.Clone(args), "-quiet", "-plot", "", "-resume", dir), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	train, test := loadForTest(t)
	dist, err := newTrainer(cfg, train, test, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	dist.release()
	d := maxParamDiff(t, nn.Parameters(single.model), nn.Parameters(dist.model))
	if d > tol {
		t.Errorf("the parameters differ from the single-process run's by up to %g, want at most %g", d, tol)
	}
	t.Logf("largest difference from the single-process run: %g", d)
	p, q := single.prog, dist.prog
	if q.Step != p.Step || !slices.Equal(q.EvalSteps, p.EvalSteps) || len(q.Loss) != len(p.Loss) || len(q.Accuracy) != len(p.Accuracy) {
		t.Fatalf("process 0 saved step %d, scored after %v with %d losses, %d accuracies; the single process: step %d, %v, %d, %d",
			q.Step, q.EvalSteps, len(q.Loss), len(q.Accuracy), p.Step, p.EvalSteps, len(p.Loss), len(p.Accuracy))
	}
	// the loss of the global batch, averaged over the shards
	for i := range p.Loss {
		if math.Abs(q.Loss[i]-p.Loss[i]) > 1e-5 {
			t.Errorf("step %d's loss %v, the single process's %v", i+1, q.Loss[i], p.Loss[i])
		}
	}
	// the test set scored in shards; the parameters' rounding may change
	// the class of an image on a boundary, no more
	n := float64(test.subset(cfg.testSubset).size())
	for i := range p.Accuracy {
		if math.Abs(q.Accuracy[i]-p.Accuracy[i]) > 1.5/n {
			t.Errorf("accuracy after step %d: %v, the single process's %v", p.EvalSteps[i], q.Accuracy[i], p.Accuracy[i])
		}
	}
}

// TestDistributedBatchNotDivisible: a batch that does not split into
// equal shards is refused, by every process, before any step.
func TestDistributedBatchNotDivisible(t *testing.T) {
	mpirun := mpitest.Need(t)
	args := append(slices.Clone(distArgs), "-batch", "63", "-data", writeShortData(t))
	env := []string{rankArgsEnv + "=" + strings.Join(args, " "), rankSaveEnv + "=" + t.TempDir()}
	out, err, _ := mpitest.Launch(mpirun, 2, time.Minute, env, "-test.run=^TestDistributedRank$", "-test.v")
	const want = "-batch 63 with -distributed: each of the 2 processes takes an equal share of every batch; pass a multiple of 2"
	if err == nil || !strings.Contains(out, want) {
		t.Fatalf("mpirun -np 2 with -batch 63: %v, want the processes to fail with %q\n%s", err, want, out)
	}
}

// writeShortData writes the examples distArgs trains and scores in
// MNIST's format to a temporary folder and returns it: the processes of a
// job read these instead of the whole set, which takes seconds under the
// race detector.
func writeShortData(t *testing.T) string {
	t.Helper()
	train, test := loadForTest(t)
	dir := t.TempDir()
	for _, f := range []struct {
		name  string
		magic uint32
		x     *array.Array
	}{
		{trainImages, 0x803, train.subset(640).images}, {trainLabels, 0x801, train.subset(640).labels},
		{testImages, 0x803, test.subset(200).images}, {testLabels, 0x801, test.subset(200).labels},
	} {
		var body []byte
		if f.magic == 0x803 {
			px, err := array.ToSlice[uint8](f.x)
			if err != nil {
				t.Fatal(err)
			}
			body = binary.BigEndian.AppendUint32(nil, f.magic)
			body = binary.BigEndian.AppendUint32(body, uint32(f.x.Shape()[0]))
			body = binary.BigEndian.AppendUint32(body, 28)
			body = binary.BigEndian.AppendUint32(body, 28)
			body = append(body, px...)
		} else {
			ls, err := array.ToSlice[int32](f.x)
			if err != nil {
				t.Fatal(err)
			}
			body = binary.BigEndian.AppendUint32(nil, f.magic)
			body = binary.BigEndian.AppendUint32(body, uint32(len(ls)))
			for _, l := range ls {
				body = append(body, uint8(l))
			}
		}
		var b bytes.Buffer
		z := gzip.NewWriter(&b)
		if _, err := z.Write(body); err != nil {
			t.Fatal(err)
		}
		if err := z.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// maxParamDiff is the largest elementwise difference between two models'
// parameters, which must have the same names and shapes.
func maxParamDiff(t *testing.T, a, b map[string]*array.Array) float64 {
	t.Helper()
	if !slices.Equal(slices.Sorted(maps.Keys(a)), slices.Sorted(maps.Keys(b))) {
		t.Fatalf("parameters %v and %v", slices.Sorted(maps.Keys(a)), slices.Sorted(maps.Keys(b)))
	}
	d := 0.0
	for name, x := range a {
		xs, err := array.ToSlice[float32](x)
		if err != nil {
			t.Fatal(err)
		}
		ys, err := array.ToSlice[float32](b[name])
		if err != nil {
			t.Fatal(err)
		}
		if len(xs) != len(ys) {
			t.Fatalf("%s: %d and %d elements", name, len(xs), len(ys))
		}
		for i := range xs {
			d = max(d, math.Abs(float64(xs[i])-float64(ys[i])))
		}
	}
	return d
}
