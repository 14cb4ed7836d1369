package linalg

import (
	"gonum.org/v1/gonum/mat"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// FromDense copies a gonum matrix into a new float64 array of shape
// [rows, cols]. Any mat.Matrix works; a *mat.Dense (or any
// mat.RawMatrixer, such as a transposed view of one) is copied row by
// row, others element by element through At. It panics with
// *array.Error if m is nil.
func FromDense(m mat.Matrix) *array.Array {
	if m == nil {
		array.Panicf("linalg.FromDense", "nil matrix")
	}
	r, c := m.Dims()
	data := make([]float64, r*c)
	if raw, ok := m.(mat.RawMatrixer); ok {
		rm := raw.RawMatrix()
		for i := range r {
			copy(data[i*c:(i+1)*c], rm.Data[i*rm.Stride:i*rm.Stride+c])
		}
		return array.FromSlice(data, r, c)
	}
	if t, ok := m.(mat.Transpose); ok {
		if raw, ok := t.Matrix.(mat.RawMatrixer); ok {
			rm := raw.RawMatrix()
			for j := range c {
				row := rm.Data[j*rm.Stride : j*rm.Stride+r]
				for i, v := range row {
					data[i*c+j] = v
				}
			}
			return array.FromSlice(data, r, c)
		}
	}
	for i := range r {
		for j := range c {
			data[i*c+j] = m.At(i, j)
		}
	}
	return array.FromSlice(data, r, c)
}

// FromVec copies a gonum vector into a new float64 array of shape [n].
// It panics with *array.Error if v is nil.
func FromVec(v mat.Vector) *array.Array {
	if v == nil {
		array.Panicf("linalg.FromVec", "nil vector")
	}
	n := v.Len()
	data := make([]float64, n)
	if raw, ok := v.(mat.RawVectorer); ok {
		rv := raw.RawVector()
		for i := range data {
			data[i] = rv.Data[i*rv.Inc]
		}
		return array.FromSlice(data, n)
	}
	for i := range data {
		data[i] = v.AtVec(i)
	}
	return array.FromSlice(data, n)
}

// ToDense evaluates a two-dimensional array and returns its values as a
// new *mat.Dense. Real dtypes other than float64 are converted (float32
// exactly); complex arrays, arrays that are not two-dimensional and
// empty arrays (gonum's matrices have at least one row and one column)
// are errors, as is any failure of the evaluation.
func ToDense(a *array.Array) (*mat.Dense, error) {
	data, err := float64Data("linalg.ToDense", a, 2)
	if err != nil {
		return nil, err
	}
	s := a.Shape()
	return mat.NewDense(s[0], s[1], data), nil
}

// ToVecDense evaluates a one-dimensional array and returns its values as
// a new *mat.VecDense, converting and failing as ToDense does.
func ToVecDense(a *array.Array) (*mat.VecDense, error) {
	data, err := float64Data("linalg.ToVecDense", a, 1)
	if err != nil {
		return nil, err
	}
	return mat.NewVecDense(len(data), data), nil
}

// float64Data evaluates a, which must have ndim axes, none empty, and a
// real dtype, and returns its values as float64 in row-major order.
func float64Data(op string, a *array.Array, ndim int) ([]float64, error) {
	if a == nil {
		return nil, array.Errorf(op, "nil array")
	}
	if a.Ndim() != ndim {
		return nil, array.Errorf(op, "array of shape %v has %d dimensions, not %d", a.Shape(), a.Ndim(), ndim)
	}
	if a.Size() == 0 {
		return nil, array.Errorf(op, "array of shape %v is empty: gonum's matrices and vectors have at least one element", a.Shape())
	}
	if a.DType() == array.Complex64 {
		return nil, array.Errorf(op, "array of shape %v has dtype %v: gonum's mat types are real", a.Shape(), a.DType())
	}
	if a.DType() != array.Float64 {
		a = ops.AsType(a, array.Float64)
	}
	return array.ToSlice[float64](a)
}
