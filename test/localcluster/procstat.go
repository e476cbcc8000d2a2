/*
Copyright 2026 The gridview Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package localcluster

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat:
// 100 on every Linux architecture Go supports, and not worth cgo to ask.
const clockTicks = 100

// ProcStat is what the kernel says of one process's memory and CPU use.
type ProcStat struct {
	// RSS is VmRSS, the resident set now; PeakRSS is VmHWM, its high-water
	// mark since the process started.
	RSS, PeakRSS int64
	// CPU is user plus system time consumed so far.
	CPU time.Duration
}

// ReadProcStat reads pid's /proc/<pid>/status and /proc/<pid>/stat.
func ReadProcStat(pid int) (ProcStat, error) {
	var st ProcStat
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return st, fmt.Errorf("reading the status of pid %d: %w", pid, err)
	}
	scanner := bufio.NewScanner(bytes.NewReader(status))
	for scanner.Scan() {
		key, value, ok := strings.Cut(scanner.Text(), ":")
		if !ok {
			continue
		}
		switch key {
		case "VmRSS":
			st.RSS, err = parseKiB(value)
		case "VmHWM":
			st.PeakRSS, err = parseKiB(value)
		}
		if err != nil {
			return st, fmt.Errorf("pid %d: %s: %w", pid, key, err)
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return st, fmt.Errorf("reading the stat of pid %d: %w", pid, err)
	}
	// The command name, in parentheses, may hold spaces: fields are
	// counted from after its closing parenthesis, where field 3 (state)
	// starts; utime and stime are fields 14 and 15.
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return st, fmt.Errorf("pid %d: unexpected /proc stat %q", pid, stat)
	}
	fields := strings.Fields(string(stat[end+1:]))
	if len(fields) < 13 {
		return st, fmt.Errorf("pid %d: /proc stat has %d fields after the name", pid, len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return st, fmt.Errorf("pid %d: cpu time %q: %w", pid, f, err)
		}
		ticks += n
	}
	st.CPU = time.Duration(ticks) * time.Second / clockTicks
	return st, nil
}

// parseKiB parses a /proc/<pid>/status size such as "  1234 kB" into bytes.
func parseKiB(value string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(value), "kB")), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", value, err)
	}
	return n * 1024, nil
}

// Pid returns the pid of the replica's running process (`ip netns exec`
// execs gridview-apiserver in place, so it is the server's own), or false
// while it is stopped.
func (r *GridviewReplica) Pid() (int, bool) {
	r.cluster.mu.Lock()
	defer r.cluster.mu.Unlock()
	if r.proc == nil {
		return 0, false
	}
	return r.proc.Pid(), true
}

// GridviewPid is the pid of the cluster's own gridview-apiserver, or false
// while it is stopped.
func (c *Cluster) GridviewPid() (int, bool) {
	return c.primary().Pid()
}

// KubeAPIServerPid is the pid of kube-apiserver, or false when it is not
// running: a scale run reports its CPU beside gridview-apiserver's, since
// every watch goes through its aggregator.
func (c *Cluster) KubeAPIServerPid() (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kubeAPIServer == nil {
		return 0, false
	}
	return c.kubeAPIServer.Pid(), true
}
