// Package arraytest compares arrays in tests: options for
// github.com/google/go-cmp that compare *array.Array values by dtype,
// shape and elements within a tolerance, and AssertClose for the common
// case of one array against another.
//
// Two values x and y match within a Tol when
//
//	|x - y| <= Atol + Rtol*min(|x|, |y|)
//
// equal values (infinities included) always match, and the parts of
// complex values are compared apart. Floats of 16 and 32 bits are
// compared at their exact values, widened to float64; integers as int64.
//
// With cmp, Approx is an option like those of cmpopts, and applies to
// arrays wherever cmp meets them, in structs and slices too:
//
//	if diff := cmp.Diff(want, got, arraytest.Approx(1e-5, 1e-8)); diff != "" {
//		t.Errorf("Softmax mismatch (-want +got):\n%s", diff)
//	}
//
// AssertClose needs no options: the zero Tol picks a tolerance for the
// dtype (DefaultTol), NaNs match NaNs, and a failure reads
//
//	float32 [2 3]: 2 of 6 elements differ beyond rtol 2e-05, atol 1e-06:
//	  index  want  got
//	  [0 1]  0.5   0.25
//	  [1 2]  1     NaN
//
// listing at most the first ten elements that differ.
package arraytest
