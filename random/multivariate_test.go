package random_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/linalg"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/random"
)

var (
	mvnMean = []float64{1, -2, 0.5}
	mvnCov  = []float64{4, 1.2, -0.6, 1.2, 2, 0.3, -0.6, 0.3, 1}
)

// mvnCholesky3 is the lower Cholesky factor of a 3×3 matrix, written out.
func mvnCholesky3(a []float64) [9]float64 {
	var l [9]float64
	for j := range 3 {
		s := a[j*3+j]
		for k := range j {
			s -= l[j*3+k] * l[j*3+k]
		}
		l[j*3+j] = math.Sqrt(s)
		for i := j + 1; i < 3; i++ {
			s := a[i*3+j]
			for k := range j {
				s -= l[i*3+k] * l[j*3+k]
			}
			l[i*3+j] = s / l[j*3+j]
		}
	}
	return l
}

func mvnValues(t *testing.T, a *array.Array) []float64 {
	t.Helper()
	v, err := array.ToSlice[float64](ops.AsType(a, array.Float64))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestMultivariateNormalFormula: a draw is mean + L·z, with z the
// standard normal draws of the same key.
func TestMultivariateNormalFormula(t *testing.T) {
	key := random.Key(42)
	got := random.MultivariateNormal(key, array.FromSlice(mvnMean), array.FromSlice(mvnCov, 3, 3), []int{5}, array.Float64)
	if !slices.Equal(got.Shape(), []int{5, 3}) {
		t.Fatalf("shape %v, want [5 3]", got.Shape())
	}
	z := mvnValues(t, random.Normal(key, []int{5, 3}, array.Float64, 0, 1))
	l := mvnCholesky3(mvnCov)
	want := make([]float64, 15)
	for s := range 5 {
		for i := range 3 {
			want[s*3+i] = mvnMean[i]
			for k := range 3 {
				want[s*3+i] += l[i*3+k] * z[s*3+k]
			}
		}
	}
	arraytest.AssertClose(t, array.FromSlice(want, 5, 3), got, arraytest.Tol{Rtol: 1e-12, Atol: 1e-12})
	// float32 rounds the same computation
	got32 := random.MultivariateNormal(key, array.FromSlice(mvnMean), array.FromSlice(mvnCov, 3, 3), []int{5}, array.Float32)
	z32 := mvnValues(t, random.Normal(key, []int{5, 3}, array.Float32, 0, 1))
	for s := range 5 {
		for i := range 3 {
			want[s*3+i] = mvnMean[i]
			for k := range 3 {
				want[s*3+i] += l[i*3+k] * z32[s*3+k]
			}
		}
	}
	arraytest.AssertClose(t, array.FromSlice(want, 5, 3), ops.AsType(got32, array.Float64), arraytest.Tol{Rtol: 1e-5, Atol: 1e-5})
}

// TestMultivariateNormalMoments: the sample mean and covariance of 20000
// draws of a fixed key lie within four standard errors of mean and cov.
func TestMultivariateNormalMoments(t *testing.T) {
	const n = 20000
	x := mvnValues(t, random.MultivariateNormal(random.Key(7), array.FromSlice(mvnMean), array.FromSlice(mvnCov, 3, 3), []int{n}, array.Float32))
	var mean [3]float64
	for s := range n {
		for i := range 3 {
			mean[i] += x[s*3+i] / n
		}
	}
	for i := range 3 {
		if se := math.Sqrt(mvnCov[i*3+i] / n); math.Abs(mean[i]-mvnMean[i]) > 4*se {
			t.Errorf("sample mean %d is %.4f, want %.4f ± %.4f", i, mean[i], mvnMean[i], 4*se)
		}
	}
	for i := range 3 {
		for j := range 3 {
			c := 0.0
			for s := range n {
				c += (x[s*3+i] - mean[i]) * (x[s*3+j] - mean[j])
			}
			c /= n - 1
			se := math.Sqrt((mvnCov[i*3+i]*mvnCov[j*3+j] + mvnCov[i*3+j]*mvnCov[i*3+j]) / n)
			if math.Abs(c-mvnCov[i*3+j]) > 4*se {
				t.Errorf("sample covariance [%d %d] is %.4f, want %.4f ± %.4f", i, j, c, mvnCov[i*3+j], 4*se)
			}
		}
	}
}

// TestMultivariateNormalShapes: batches of means and covariances
// broadcast, and shape defaults to their broadcast.
func TestMultivariateNormalShapes(t *testing.T) {
	key := random.Key(1)
	means := array.FromSlice([]float64{0, 0, 10, 10}, 2, 2)
	covs := array.FromSlice([]float64{1, 0, 0, 1, 4, 0, 0, 4, 9, 0, 0, 9}, 3, 1, 2, 2)
	for _, c := range []struct {
		shape, want []int
	}{
		{nil, []int{3, 2, 2}},
		{[]int{4, 3, 2}, []int{4, 3, 2, 2}},
		{[]int{3, 2}, []int{3, 2, 2}},
	} {
		got := random.MultivariateNormal(key, means, covs, c.shape, array.Float64)
		if !slices.Equal(got.Shape(), c.want) {
			t.Errorf("shape %v: result of shape %v, want %v", c.shape, got.Shape(), c.want)
		}
	}
	// the batch element [b, m] uses covs[b] and means[m]
	got := random.MultivariateNormal(key, means, covs, nil, array.Float64)
	z := random.Normal(key, []int{3, 2, 2}, array.Float64, 0, 1)
	scale := array.FromSlice([]float64{1, 2, 3}, 3, 1, 1)
	want := ops.Add(means, ops.Mul(scale, z))
	arraytest.AssertClose(t, want, got, arraytest.Tol{Rtol: 1e-12, Atol: 1e-12})
}

func TestMultivariateNormalBadArguments(t *testing.T) {
	key := random.Key(1)
	m := array.FromSlice([]float64{0, 0})
	c := array.FromSlice([]float64{1, 0, 0, 1}, 2, 2)
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"nil mean", func() { random.MultivariateNormal(key, nil, c, nil, array.Float32) }, "nil"},
		{"0-d mean", func() { random.MultivariateNormal(key, array.Scalar(1.0), c, nil, array.Float32) }, "mean of shape []"},
		{"n differs", func() { random.MultivariateNormal(key, array.FromSlice([]float64{0, 0, 0}), c, nil, array.Float32) }, "[2 2] does not match mean of shape [3]"},
		{"cov not square", func() { random.MultivariateNormal(key, m, ops.Zeros([]int{2, 3}, array.Float32), nil, array.Float32) }, "[2 3]"},
		{"batches", func() {
			random.MultivariateNormal(key, ops.Zeros([]int{3, 2}, array.Float32), ops.Zeros([]int{4, 2, 2}, array.Float32), nil, array.Float32)
		}, "do not broadcast"},
		{"shape", func() {
			random.MultivariateNormal(key, ops.Zeros([]int{3, 2}, array.Float32), c, []int{2}, array.Float32)
		}, "not a broadcast"},
		{"negative shape", func() { random.MultivariateNormal(key, m, c, []int{-1}, array.Float32) }, "negative"},
		{"dtype", func() { random.MultivariateNormal(key, m, c, nil, array.Int32) }, "int32"},
		{"key", func() { random.MultivariateNormal(array.FromSlice([]float32{1, 2}), m, c, nil, array.Float32) }, "key"},
	} {
		err := array.Try(tc.f)
		var e *array.Error
		if !errors.As(err, &e) || e.Op != "random.MultivariateNormal" || !strings.Contains(e.Msg, tc.want) {
			t.Errorf("%s: %v, want an *array.Error of random.MultivariateNormal mentioning %q", tc.name, err, tc.want)
		}
	}
	err := random.MultivariateNormal(key, m, array.FromSlice([]float64{1, 1, 1, 1}, 2, 2), nil, array.Float64).Eval()
	if !errors.Is(err, linalg.ErrNotPositiveDefinite) {
		t.Errorf("a singular covariance: %v, want an error wrapping linalg.ErrNotPositiveDefinite", err)
	}
}

// TestMultivariateNormalGradient: the draws are differentiable in mean
// (the gradient of their sum is the number of draws) and in cov, whose
// gradient matches finite differences and is symmetric.
func TestMultivariateNormalGradient(t *testing.T) {
	key := random.Key(3)
	w := random.Normal(random.Key(4), []int{4, 3}, array.Float64, 0, 1)
	f := func(in ...*array.Array) *array.Array {
		return ops.Sum(ops.Mul(random.MultivariateNormal(key, in[0], in[1], []int{4}, array.Float64), w))
	}
	mean, cov := array.FromSlice(mvnMean), array.FromSlice(mvnCov, 3, 3)
	g := graph.Grad(f, 0, 1)(mean, cov)
	arraytest.AssertClose(t, ops.Sum(w, 0), g[0], arraytest.Tol{Rtol: 1e-12, Atol: 1e-12}, "mean")
	fd := make([]float64, 9)
	for i := range fd {
		const h = 1e-6
		c := append([]float64(nil), mvnCov...)
		c[i] += h
		hi := f(mean, array.FromSlice(c, 3, 3)).Item()
		c[i] -= 2 * h
		lo := f(mean, array.FromSlice(c, 3, 3)).Item()
		fd[i] = (hi - lo) / (2 * h)
	}
	arraytest.AssertClose(t, array.FromSlice(fd, 3, 3), g[1], arraytest.Tol{Rtol: 1e-5, Atol: 1e-7}, "cov")
	arraytest.AssertClose(t, ops.SwapAxes(g[1], 0, 1), g[1], arraytest.Tol{Rtol: 1e-12, Atol: 1e-12}, "cov's gradient is symmetric")
}

// Draws of a correlated pair, and their sample mean.
func ExampleMultivariateNormal() {
	mean := array.FromSlice([]float64{1, -1})
	cov := array.FromSlice([]float64{1, 0.8, 0.8, 1}, 2, 2)
	x := random.MultivariateNormal(random.Key(0), mean, cov, []int{10000}, array.Float64)
	fmt.Println(x.Shape())
	fmt.Println(ops.RoundDecimals(ops.Mean(x, 0), 1))
	// Output:
	// [10000 2]
	// array([ 1., -1.], dtype=float64)
}
