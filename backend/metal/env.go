package metal

import (
	"fmt"
	"strconv"
)

// Environment variables that tune the Metal host. Each is read once, when
// the device is first used; a malformed value makes the device
// unavailable with an error that names the variable, rather than being
// ignored.
const (
	// envCommitOps is how many dispatches go into one command buffer
	// before it is committed (default 40). Fewer means the GPU starts
	// sooner; more means less per-buffer overhead.
	envCommitOps = "FATHOM_METAL_COMMIT_OPS"
	// envCommitMB is how many MiB of distinct buffers one command buffer
	// may reference before it is committed (default 40), which bounds the
	// memory that uncommitted work keeps alive.
	envCommitMB = "FATHOM_METAL_COMMIT_MB"
	// envCacheLimitMB is how many MiB of freed buffers the allocator keeps
	// for reuse (default: the device's recommended working set size). Zero
	// disables the cache.
	envCacheLimitMB = "FATHOM_METAL_CACHE_LIMIT_MB"
	// envMemoryLimitMB is how many MiB of buffers, live and cached, the
	// allocator hands out before an allocation fails with an error (default
	// 1.5 times the recommended working set size, as in MLX).
	envMemoryLimitMB = "FATHOM_METAL_MEMORY_LIMIT_MB"
	// envMaxBuffers is the most Metal buffers, live and cached, that may
	// exist at once (default 499000, under Metal's limit on resident
	// allocations).
	envMaxBuffers = "FATHOM_METAL_MAX_BUFFERS"
)

// config holds the host's tuning knobs.
type config struct {
	commitOps   int
	commitBytes int64
	cacheLimit  int64
	memLimit    int64
	maxBuffers  int
}

// loadConfig reads the environment through getenv. workingSet is the
// device's recommended working set in bytes, which sets the defaults of
// the memory limits.
func loadConfig(getenv func(string) string, workingSet int64) (config, error) {
	c := config{
		commitOps:   40,
		commitBytes: 40 << 20,
		cacheLimit:  workingSet,
		memLimit:    workingSet + workingSet/2,
		maxBuffers:  499000,
	}
	ints := []struct {
		name  string
		min   int64
		scale int64
		set   func(int64)
	}{
		{envCommitOps, 1, 1, func(v int64) { c.commitOps = int(v) }},
		{envCommitMB, 1, 1 << 20, func(v int64) { c.commitBytes = v }},
		{envCacheLimitMB, 0, 1 << 20, func(v int64) { c.cacheLimit = v }},
		{envMemoryLimitMB, 1, 1 << 20, func(v int64) { c.memLimit = v }},
		{envMaxBuffers, 1, 1, func(v int64) { c.maxBuffers = int(v) }},
	}
	for _, k := range ints {
		s := getenv(k.name)
		if s == "" {
			continue
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < k.min || v > (1<<62)/k.scale {
			return config{}, fmt.Errorf("%s=%q is not an integer >= %d", k.name, s, k.min)
		}
		k.set(v * k.scale)
	}
	return c, nil
}
