package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of /proc/PID/stat times (100 on every Linux we run on).
const clockTicks = 100

// procTimes is what /proc/PID/stat says a process has used so far.
type procTimes struct {
	user, sys float64 // CPU seconds
	faults    int64   // minor page faults: first touches of memory
}

// readProcTimes reads /proc/PID/stat; zero if unknown.
func readProcTimes(pid int) procTimes {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procTimes{}
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return procTimes{}
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return procTimes{}
	}
	minflt, _ := strconv.ParseInt(f[7], 10, 64)
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return procTimes{user: utime / clockTicks, sys: stime / clockTicks, faults: minflt}
}

// clickhousePID finds a local ClickHouse server process; 0 when there is none.
func clickhousePID() int {
	stats, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if name := strings.TrimSpace(string(b)); strings.HasPrefix(name, "clickhouse") && name != "clickhouse-clie" {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			return pid
		}
	}
	return 0
}

// cpuMeter measures what processes spend between start and now.
type cpuMeter struct {
	pids  []int
	start []procTimes
}

func startCPU(pids ...int) *cpuMeter {
	m := &cpuMeter{pids: pids}
	for _, p := range pids {
		m.start = append(m.start, readProcTimes(p))
	}
	return m
}

// since returns what process i (in startCPU's order) has used since start.
func (m *cpuMeter) since(i int) procTimes {
	now := readProcTimes(m.pids[i])
	return procTimes{user: now.user - m.start[i].user, sys: now.sys - m.start[i].sys, faults: now.faults - m.start[i].faults}
}

// perRow returns each process's CPU since start in microseconds per row.
func (m *cpuMeter) perRow(rows int) []float64 {
	out := make([]float64, len(m.pids))
	for i, p := range m.pids {
		if p != 0 {
			t := m.since(i)
			out[i] = (t.user + t.sys) * 1e6 / float64(rows)
		}
	}
	return out
}
