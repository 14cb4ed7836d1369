package opset

// ScatterMode is how a scatter combines an update with the element it
// lands on; both backends and package ops share these values.
type ScatterMode int

// The scatter modes: Set writes the update (where indices repeat, the
// update at the later index position wins); the others combine, and
// every repeated index contributes (numpy's np.add.at and its siblings).
const (
	ScatterSet ScatterMode = iota
	ScatterSum
	ScatterProd
	ScatterMax
	ScatterMin
)
