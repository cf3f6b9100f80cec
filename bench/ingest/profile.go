package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
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
	go func() { p.done <- fetchProfile("http://"+pprofAddr(o)+"/debug/pprof/profile", seconds, p.file) }()
	time.Sleep(50 * time.Millisecond) // let the profile start before the first request
	p.stop = func() error { return <-p.done }
	return p
}

func fetchProfile(url string, seconds int, file string) error {
	res, err := http.Get(fmt.Sprintf("%s?seconds=%d", url, seconds))
	if err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("cpu profile: status %d", res.StatusCode)
	}
	out, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, res.Body); err != nil {
		out.Close()
		return fmt.Errorf("write cpu profile: %w", err)
	}
	return out.Close()
}
