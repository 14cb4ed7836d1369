package ops

// The primitives the external tests build directly to check Equivalent.
type (
	ArgReducePrim     = argReducePrim
	ArgSortPrim       = argSortPrim
	BroadcastPrim     = broadcastPrim
	ConcatenatePrim   = concatenatePrim
	LogSoftmaxPrim    = logSoftmaxPrim
	LogSumExpPrim     = logSumExpPrim
	MatMulPrim        = matMulPrim
	PadPrim           = padPrim
	PutAlongAxisPrim  = putAlongAxisPrim
	ReducePrim        = reducePrim
	ReshapePrim       = reshapePrim
	ScanPrim          = scanPrim
	SlicePrim         = slicePrim
	SoftmaxPrim       = softmaxPrim
	SortPrim          = sortPrim
	TakeAlongAxisPrim = takeAlongAxisPrim
	TakePrim          = takePrim
	TopKPrim          = topKPrim
	TransposePrim     = transposePrim
)
