package metal

import "github.com/fathom-go/fathom/backend/metal/internal/plan"

// Launch is one kernel dispatch, described without reference to any
// device. Every kernel of this package is a function from strided views
// to a list of Launches (its plan), which Run queues on the GPU.
type Launch = plan.Launch

// Memory is a block of device-visible memory: a shared-storage MTLBuffer
// on Apple silicon (Alloc's *array.Storage), host memory elsewhere.
type Memory = plan.Memory

// bufArg is a buffer argument of a Launch.
type bufArg = plan.BufArg
