package main

import (
	"fmt"
	"os"
	"time"

	"github.com/kwhouse/kwhouse/bench/benchkit"
)

// pprofAddr is where the kwhouse under test serves pprof: KWBENCH_PPROF, or a fixed
// loopback port when -cpuprofile asks for a profile.
func pprofAddr(o options) string {
	if a := os.Getenv("KWBENCH_PPROF"); a != "" {
		return a
	}
	if o.cpuProfile != "" {
		return "127.0.0.1:16060"
	}
	return ""
}

// profile is a CPU profile of kwhouse being taken over phase (a).
type profile struct {
	file string
	done chan error
	stop func() error
}

// startProfile starts kwhouse's CPU profile (nothing without -cpuprofile) into
// FILE.SHAPE; stop waits for it and writes the file. pprof's endpoint takes a duration, so
// it asks for 3 s per 500,000 rows, longer than a pass takes here: idle time at the end
// adds no samples.
func startProfile(o options, s shape, rows int) *profile {
	p := &profile{file: o.cpuProfile + "." + s.name, done: make(chan error, 1)}
	p.stop = func() error { return nil }
	if o.cpuProfile == "" {
		return p
	}
	seconds := 3 * max(1, rows/500_000)
	go func() {
		p.done <- benchkit.SaveURL(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", pprofAddr(o), seconds), p.file)
	}()
	time.Sleep(50 * time.Millisecond) // let the profile start before the first request
	p.stop = func() error { return <-p.done }
	return p
}
