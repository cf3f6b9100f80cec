package embedded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrInUse is returned by Lock when another process holds the directory.
var ErrInUse = errors.New("embedded directory in use")

// LockFile is the file of dir whose flock marks the directory taken.
func LockFile(dir string) string { return filepath.Join(dir, "kwhouse.lock") }

// Lock takes dir for this process until the returned file is closed (or the process
// ends): an exclusive flock on its lock file, which then holds the holder's pid for the
// message another process gets.
func Lock(dir string) (*os.File, error) {
	name := LockFile(dir)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("embedded lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(name)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is used by another kwhouse process (pid %s); stop it first, or give this one another directory (--embedded DIR)",
				ErrInUse, dir, pidOf(holder))
		}
		return nil, fmt.Errorf("embedded lock %s: %w", name, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0) // for the message only
	}
	return f, nil
}

func pidOf(b []byte) string {
	if p := strings.TrimSpace(string(b)); p != "" {
		return p
	}
	return "unknown"
}
