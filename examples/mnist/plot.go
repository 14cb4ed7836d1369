package main

import (
	"fmt"
	"math"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// smoothing is the number of steps the plotted training loss is averaged
// over: one step's loss is noisy.
const smoothing = 20

// writePlot draws the run's training loss and test accuracy side by side
// against the epoch, and writes them to path as a PNG.
func writePlot(path string, p progress, stepsPerEpoch int, title string) error {
	epoch := func(step int) float64 { return float64(step) / float64(stepsPerEpoch) }

	last := epoch(len(p.Loss))
	ticks := plot.ConstantTicks(epochTicks(last))

	loss := plot.New()
	loss.Title.Text = "training loss (" + title + ")"
	loss.X.Label.Text = "epoch"
	loss.X.Min, loss.X.Max, loss.X.Tick.Marker = 0, last, ticks
	loss.Y.Label.Text = fmt.Sprintf("cross-entropy, mean of %d steps", smoothing)
	// the loss falls by orders of magnitude: a log scale shows all of it
	loss.Y.Scale, loss.Y.Tick.Marker = plot.LogScale{}, logTicks
	pts := make(plotter.XYs, 0, len(p.Loss))
	var sum float64
	for i, v := range p.Loss {
		sum += v
		if i >= smoothing {
			sum -= p.Loss[i-smoothing]
		}
		pts = append(pts, plotter.XY{X: epoch(i + 1), Y: sum / float64(min(i+1, smoothing))})
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return err
	}
	loss.Add(line, plotter.NewGrid())

	acc := plot.New()
	acc.Title.Text = "test accuracy (" + title + ")"
	acc.X.Label.Text = "epoch"
	acc.X.Min, acc.X.Max, acc.X.Tick.Marker = 0, last, ticks
	acc.Y.Label.Text = "%"
	acc.Y.Tick.Marker = percentTicks
	pts = make(plotter.XYs, len(p.Accuracy))
	for i, a := range p.Accuracy {
		pts[i] = plotter.XY{X: epoch(p.EvalSteps[i]), Y: 100 * a}
	}
	accLine, accPoints, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	acc.Add(accLine, accPoints, plotter.NewGrid())

	const w, h = 12 * vg.Inch, 4.5 * vg.Inch
	img := vgimg.New(w, h)
	dc := draw.New(img)
	canvases := plot.Align([][]*plot.Plot{{loss, acc}}, draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Millimeter * 6}, dc)
	loss.Draw(canvases[0][0])
	acc.Draw(canvases[0][1])

	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// epochTicks marks the whole epochs from 0 to last.
func epochTicks(last float64) []plot.Tick {
	var ts []plot.Tick
	for e := 0; float64(e) <= last; e++ {
		ts = append(ts, plot.Tick{Value: float64(e), Label: fmt.Sprint(e)})
	}
	return ts
}

// percentTicks are the default ticks labelled with two decimals: the
// accuracies of a run differ in the first or second.
var percentTicks = plot.TickerFunc(func(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', 2, 64)
		}
	}
	return ts
})

// logTicks mark 1, 2 and 5 times the powers of ten: powers of ten alone
// leave the loss's axis with one or two labels.
var logTicks = plot.TickerFunc(func(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for p := math.Floor(math.Log10(min)); p <= math.Ceil(math.Log10(max)); p++ {
		for _, m := range []float64{1, 2, 5} {
			if v := m * math.Pow(10, p); v >= min && v <= max {
				ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	return ts
})
