//go:build !linux && !darwin

package array

import "math"

func physicalMemory() int64 { return math.MaxInt64 }

func availableMemory() (int64, bool) { return 0, false }
