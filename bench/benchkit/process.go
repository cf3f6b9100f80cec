package benchkit

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Process is kwhouse run as its own process (`bin/kwhouse serve`), so that the CPU, RSS
// and heap a benchmark reads of it are kwhouse's alone, not the load generator's.
type Process struct {
	Cmd  *exec.Cmd
	Base string // its API: http://addr
}

// StartProcess starts `bin serve` listening on addr, with env (KWHOUSE_* settings) added
// to this process's environment and its stderr passed through, and waits until /readyz
// answers 200 (10 s at most).
func StartProcess(bin, addr string, env ...string) (*Process, error) {
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(append(os.Environ(), "KWHOUSE_HTTP_ADDR="+addr), env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (make build): %w", bin, err)
	}
	p := &Process{Cmd: cmd, Base: "http://" + addr}
	for i := 0; i < 100; i++ {
		if res, err := http.Get(p.Base + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.Stop()
	return nil, fmt.Errorf("kwhouse did not become ready at %s", p.Base)
}

// PID is the process id.
func (p *Process) PID() int { return p.Cmd.Process.Pid }

// Stop interrupts the process (a graceful shutdown) and waits for it to exit.
func (p *Process) Stop() { _ = p.Cmd.Process.Signal(os.Interrupt); _ = p.Cmd.Wait() }

// ProcStatusKiB reads a kB field of /proc/PID/status (VmRSS: the resident set now, VmHWM:
// its high-water mark); pid 0 reads this process's own. 0 when it cannot be read.
func ProcStatusKiB(pid int, field string) int64 {
	path := "/proc/self/status"
	if pid != 0 {
		path = fmt.Sprintf("/proc/%d/status", pid)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field+":" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// SaveURL writes the body of a GET of url (a pprof profile) to file.
func SaveURL(url, file string) error {
	res, err := http.Get(url)
	if err != nil {
		return fmt.Errorf("get %s: %w", url, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("get %s: status %d", url, res.StatusCode)
	}
	out, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, res.Body); err != nil {
		out.Close()
		return fmt.Errorf("write %s: %w", file, err)
	}
	return out.Close()
}
