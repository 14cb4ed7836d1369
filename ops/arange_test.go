package ops_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/refcase"
	"github.com/fathom-go/fathom/ops"
)

// TestArangeIntegerFractionalStep checks gen_arange.py's cases: into an
// integer dtype, numpy (and MLX) repeat the difference of the first two
// converted elements, so a fractional step can give a run of zeros.
func TestArangeIntegerFractionalStep(t *testing.T) {
	for _, c := range loadCases(t, "arange.json") {
		var start, stop, step float64
		c.Param(t, "start", &start)
		c.Param(t, "stop", &stop)
		c.Param(t, "step", &step)
		dt := refcase.ParseDType(t, c.Expected[0].DType)
		checkArray(t, c.Name, ops.Arange(start, stop, step, dt), c.Expected[0])
	}
}

func TestIdentity(t *testing.T) {
	for _, dt := range []array.DType{array.Float32, array.Int32, array.Bool, array.Float64} {
		got, want := ops.Identity(3, dt), ops.Eye(3, 3, 0, dt)
		if got.DType() != dt || fmt.Sprint(got.Shape()) != "[3 3]" || got.String() != want.String() {
			t.Errorf("%v: %v, want %v", dt, got, want)
		}
	}
	if s := ops.Identity(0, array.Float32).Shape(); fmt.Sprint(s) != "[0 0]" {
		t.Errorf("Identity(0): shape %v", s)
	}
	err := array.Try(func() { ops.Identity(-1, array.Float32) })
	var e *array.Error
	if !errors.As(err, &e) || e.Op != "ops.Identity" || !strings.Contains(e.Error(), "-1") {
		t.Errorf("Identity(-1): %v, want an ops.Identity *array.Error", err)
	}
}
