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
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long a process may take to shut down after SIGTERM.
const stopGrace = 15 * time.Second

// Process is a child the cluster started, in a process group of its own so
// that stopping it also stops anything it spawned.
type Process struct {
	Name    string
	LogFile string // stdout and stderr, appended across restarts

	cmd      *exec.Cmd
	done     chan struct{}
	waitErr  error // valid once done is closed
	stopOnce sync.Once
	stopErr  error
}

// startProcess runs argv with its output appended to <logDir>/<name>.log.
func startProcess(name, logDir string, argv []string) (*Process, error) {
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening log of %s: %w", name, err)
	}
	fmt.Fprintf(logFile, "=== %s starting %s\n", time.Now().Format(time.RFC3339), strings.Join(argv, " "))

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid: true,
		// If the harness itself is killed without running Stop, take the
		// child down too instead of leaving a server running.
		Pdeathsig: syscall.SIGKILL,
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{Name: name, LogFile: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process id, which is also its process group id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited returns nil while the process runs and, once it has exited, how
// it ended with the tail of its log: a poll loop that checks it fails fast
// and says why instead of waiting out its timeout.
func (p *Process) Exited() error {
	select {
	case <-p.done:
		return p.exitError()
	default:
		return nil
	}
}

// exitError describes how the process ended, with the tail of its log.
func (p *Process) exitError() error {
	status := p.waitErr
	if status == nil {
		status = errors.New("exit status 0") // unexpected all the same: a component's exit is a failure
	}
	return fmt.Errorf("%s exited (%w); last lines of %s:\n%s", p.Name, status, p.LogFile, tailFile(p.LogFile, 30))
}

// Stop sends SIGTERM to the process group, then SIGKILL after a grace
// period. Calling it again returns the first result.
func (p *Process) Stop() error {
	p.stopOnce.Do(func() { p.stopErr = p.stop(stopGrace) })
	return p.stopErr
}

// Kill sends SIGKILL to the process group at once and waits until the
// process has exited: a crash, with no chance to clean up (e.g. to release a
// leader-election Lease). Later Stop and Kill calls return its result.
func (p *Process) Kill() error {
	p.stopOnce.Do(func() { p.stopErr = p.stop(0) })
	return p.stopErr
}

// stop sends SIGTERM, then SIGKILL after grace; with no grace, SIGKILL only.
func (p *Process) stop(grace time.Duration) error {
	pgid := p.Pid()
	select {
	case <-p.done:
		return nil
	default:
	}
	exited := false
	if grace > 0 {
		if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("sending SIGTERM to %s (pgid %d): %w", p.Name, pgid, err)
		}
		select {
		case <-p.done:
			exited = true
		case <-time.After(grace):
		}
	}
	if !exited {
		if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("sending SIGKILL to %s (pgid %d): %w", p.Name, pgid, err)
		}
		<-p.done
	}
	// Children that outlived the leader still hold the group id.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return nil
}

// tailFile returns the last n lines of a file, for error messages.
func tailFile(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
