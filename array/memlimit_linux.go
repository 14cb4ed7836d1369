package array

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"strconv"
	"syscall"
)

// physicalMemory is the machine's RAM, or the cgroup's limit where it is
// lower (a container's memory.max).
func physicalMemory() int64 {
	total := int64(math.MaxInt64)
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) == nil && si.Totalram > 0 {
		total = int64(si.Totalram) * int64(si.Unit)
	}
	if lim, ok := cgroupValue("memory.max"); ok {
		total = min(total, lim)
	}
	return total
}

// availableMemory is what the kernel reports it could give without
// swapping (MemAvailable), bounded by the cgroup's headroom.
func availableMemory() (int64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	free, ok := int64(0), false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, found := bytes.CutPrefix(sc.Bytes(), []byte("MemAvailable:")); found {
			fields := bytes.Fields(v)
			if len(fields) > 0 {
				if kb, err := strconv.ParseInt(string(fields[0]), 10, 64); err == nil {
					free, ok = kb*1024, true
				}
			}
			break
		}
	}
	if !ok {
		return 0, false
	}
	if lim, ok := cgroupValue("memory.max"); ok {
		if cur, ok := cgroupValue("memory.current"); ok {
			free = min(free, max(lim-cur, 0))
		}
	}
	return free, true
}

// cgroupValue reads a number from the process's cgroup v2 directory
// (mounted at /sys/fs/cgroup in a container); "max" and errors are not
// limits.
func cgroupValue(name string) (int64, bool) {
	b, err := os.ReadFile("/sys/fs/cgroup/" + name)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	return v, err == nil
}
