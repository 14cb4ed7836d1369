package main

import (
	"image/png"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/nn"
)

// trainForTest runs the program on the shared data with args, quietly.
func trainForTest(t *testing.T, args ...string) *trainer {
	t.Helper()
	cfg, err := parseArgs(append([]string{"-quiet", "-plot", ""}, args...), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	train, test := loadForTest(t)
	tr, err := newTrainer(cfg, train, test, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.release()
	if err := tr.run(); err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestShortRunLearns trains the MLP, with small hidden layers, for 300
// steps on 6000 images and scores 2000 test images: chance is 10%, and
// a model that does not learn (a wrong gradient, labels out of step with
// the images) stays far below the bar.
func TestShortRunLearns(t *testing.T) {
	tr := trainForTest(t, "-hidden", "64", "-batch", "64", "-train-subset", "6000", "-test-subset", "2000", "-steps", "300", "-epochs", "10")
	p := tr.prog
	if p.Step != 300 || len(p.Loss) != 300 {
		t.Fatalf("%d steps, %d losses, want 300", p.Step, len(p.Loss))
	}
	// 93 steps an epoch: scored after epochs 1, 2, 3 and at the stop
	if want := []int{93, 186, 279, 300}; !slices.Equal(p.EvalSteps, want) {
		t.Errorf("scored after steps %v, want %v", p.EvalSteps, want)
	}
	if p.Epoch != 3 {
		t.Errorf("%d epochs completed, want 3", p.Epoch)
	}
	if acc := tr.accuracy(); acc < 0.85 {
		t.Errorf("test accuracy %.2f%% after 300 steps, want at least 85%%", 100*acc)
	}
	first, last := mean(p.Loss[:10]), mean(p.Loss[len(p.Loss)-20:])
	if !(first > 1.5 && last < 0.4) {
		t.Errorf("the loss went from %.3f (first 10 steps) to %.3f (last 20): want from above 1.5 (near ln 10) to below 0.4", first, last)
	}
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// TestShortRunCNN runs the CNN's code path: a few steps must lower the
// loss and beat chance by far.
func TestShortRunCNN(t *testing.T) {
	tr := trainForTest(t, "-model", "cnn", "-batch", "32", "-train-subset", "1000", "-test-subset", "200", "-steps", "20", "-epochs", "10")
	p := tr.prog
	if acc := tr.accuracy(); acc < 0.6 {
		t.Errorf("test accuracy %.2f%% after 20 steps, want at least 60%%", 100*acc)
	}
	if first, last := mean(p.Loss[:5]), mean(p.Loss[len(p.Loss)-5:]); !(last < first/2) {
		t.Errorf("the loss went from %.3f (first 5 steps) to %.3f (last 5): want it halved", first, last)
	}
	names := slices.Sorted(maps.Keys(nn.Parameters(tr.model)))
	want := []string{"conv1.bias", "conv1.weight", "conv2.bias", "conv2.weight", "out.bias", "out.weight"}
	if !slices.Equal(names, want) {
		t.Errorf("CNN parameters %v, want %v", names, want)
	}
	if got := nn.Parameters(tr.model)["conv2.weight"].Shape(); !slices.Equal(got, []int{64, 3, 3, 32}) {
		t.Errorf("conv2.weight has shape %v, want [64 3 3 32] (channels-last)", got)
	}
}

// TestResumeIsBitIdentical stops a run in the middle of its second epoch
// and resumes it from the checkpoint: the parameters, the optimiser's
// state and the losses equal those of a run that never stopped, bit for
// bit, for both models (the CNN's needs a convolution weight gradient
// that gives the same bits on every run).
func TestResumeIsBitIdentical(t *testing.T) {
	for _, model := range []string{"mlp", "cnn"} {
		t.Run(model, func(t *testing.T) { testResume(t, model) })
	}
}

func testResume(t *testing.T, model string) {
	common := []string{"-model", model, "-hidden", "32", "-batch", "50", "-train-subset", "1000", "-test-subset", "500", "-seed", "7"}
	const stop, end = 27, 50 // 20 steps an epoch: step 27 is inside epoch 2
	whole := trainForTest(t, append(common, "-steps", "50")...)

	dir := filepath.Join(t.TempDir(), "ckpt")
	first := trainForTest(t, append(common, "-steps", "27", "-save", dir)...)
	if first.prog.Step != stop {
		t.Fatalf("the first half stopped at step %d, want %d", first.prog.Step, stop)
	}
	resumed := trainForTest(t, append(common, "-steps", "50", "-resume", dir)...)
	if resumed.prog.Step != end {
		t.Fatalf("the resumed run stopped at step %d, want %d", resumed.prog.Step, end)
	}

	exact := arraytest.Approx(0, 0)
	if d := cmp.Diff(nn.Parameters(whole.model), nn.Parameters(resumed.model), exact); d != "" {
		t.Errorf("parameters (-whole +resumed):\n%s", d)
	}
	if d := cmp.Diff(whole.opt.State(), resumed.opt.State(), exact); d != "" {
		t.Errorf("optimiser state (-whole +resumed):\n%s", d)
	}
	if !slices.Equal(whole.prog.Loss, resumed.prog.Loss) {
		t.Errorf("losses differ:\nwhole   %v\nresumed %v", whole.prog.Loss, resumed.prog.Loss)
	}
	if whole.prog.DataKey != resumed.prog.DataKey || whole.prog.Epoch != resumed.prog.Epoch {
		t.Errorf("epoch %d, data key %v after the whole run; %d, %v after the resumed one",
			whole.prog.Epoch, whole.prog.DataKey, resumed.prog.Epoch, resumed.prog.DataKey)
	}
	// the stop's own scoring at step 27 is the only difference
	if want := []int{20, 27, 40, 50}; !slices.Equal(resumed.prog.EvalSteps, want) {
		t.Errorf("the resumed run was scored after steps %v, want %v", resumed.prog.EvalSteps, want)
	}

	// a checkpoint of another run's shape is refused, naming the flag
	cfg, err := parseArgs([]string{"-quiet", "-plot", "", "-model", model, "-hidden", "32", "-batch", "25", "-train-subset", "1000", "-seed", "7", "-resume", dir}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	train, test := loadForTest(t)
	if _, err := newTrainer(cfg, train, test, io.Discard); err == nil || !strings.Contains(err.Error(), "-batch 50") {
		t.Errorf("resuming with another -batch: %v, want an error naming -batch 50", err)
	}
}

// TestPlot checks that the plot is a PNG of the size asked for.
func TestPlot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.png")
	p := progress{
		Loss:      []float64{2.3, 1.5, 0.9, 0.6, 0.5, 0.45, 0.4, 0.38},
		EvalSteps: []int{4, 8},
		Accuracy:  []float64{0.91, 0.94},
	}
	if err := writePlot(path, p, 4, "mlp"); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatalf("the plot is not a PNG: %v", err)
	}
	if cfg.Width < 1000 || cfg.Height < 300 {
		t.Errorf("the plot is %d x %d pixels", cfg.Width, cfg.Height)
	}
}

func TestFlags(t *testing.T) {
	cfg, err := parseArgs(nil, io.Discard)
	if err != nil {
		t.Fatalf("the defaults are refused: %v", err)
	}
	if cfg.model != "mlp" || cfg.hidden != 512 || cfg.batch != 128 || cfg.lr != 1e-3 || cfg.epochs != 3 || cfg.plot != "mnist.png" {
		t.Errorf("defaults %+v", cfg)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-model", "resnet"}, `-model "resnet": want mlp or cnn`},
		{[]string{"-hidden", "0"}, "-hidden 0"},
		{[]string{"-batch", "0"}, "-batch 0: want 1 to the 60000 training images"},
		{[]string{"-batch", "200", "-train-subset", "100"}, "-batch 200: want 1 to the 100 training images"},
		{[]string{"-lr", "-1"}, "-lr -1: want a positive learning rate"},
		{[]string{"-lr", "NaN"}, "-lr NaN"},
		{[]string{"-lr-decay", "2"}, "-lr-decay 2"},
		{[]string{"-epochs", "0"}, "-epochs 0"},
		{[]string{"-steps", "-3"}, "-steps -3"},
		{[]string{"-train-subset", "70000"}, "-train-subset 70000: want 0 (all) to 60000"},
		{[]string{"-test-subset", "-1"}, "-test-subset -1"},
		{[]string{"-eval-batch", "0"}, "-eval-batch 0"},
		{[]string{"-plot", "out.jpg"}, "-plot out.jpg: the plot is a PNG"},
		{[]string{"-modle", "cnn"}, "flag provided but not defined: -modle"},
		{[]string{"-batch", "many"}, `invalid value "many" for flag -batch`},
		{[]string{"cnn"}, `unexpected arguments ["cnn"]`},
	} {
		_, err := parseArgs(c.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.args, err, c.want)
		}
	}
	// every bad flag is reported, not only the first
	_, err = parseArgs([]string{"-model", "x", "-epochs", "0"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-model") || !strings.Contains(err.Error(), "-epochs") {
		t.Errorf("two bad flags: %v, want both named", err)
	}
}
