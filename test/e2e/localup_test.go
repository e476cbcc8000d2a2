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

package e2e

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gridview/gridview/test/localcluster"
)

// The commands `make run` prints must work on its demo as printed: a
// command that answers NotFound or nothing is a wrong instruction.
func TestMakeRunPrintsCommandsThatWork(t *testing.T) {
	dir := t.TempDir()
	localUp := filepath.Join(dir, "bin", "local-up")
	root, err := localcluster.FindRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", localUp, "./hack/local-up")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building local-up: %v\n%s", err, out)
	}
	// make run builds local-up beside kubectl and kubectl-gridview, which
	// its commands run from there: they must work without either on PATH.
	for _, command := range []string{"kubectl", "kubectl-gridview"} {
		if err := os.Symlink(filepath.Join(binDir, command), filepath.Join(dir, "bin", command)); err != nil {
			t.Fatal(err)
		}
	}
	// The commands get a PATH of the shell tools they use alone: this
	// machine's own kubectl, if any, must not stand in for the printed one.
	shellTools := filepath.Join(dir, "path")
	if err := os.Mkdir(shellTools, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, command := range []string{"bash", "curl", "grep"} {
		path, err := exec.LookPath(command)
		if err != nil {
			t.Fatalf("the printed commands need %s: %v", command, err)
		}
		if err := os.Symlink(path, filepath.Join(shellTools, command)); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "PATH="+shellTools)

	// local-up runs in the repository, for its examples, and prints the
	// paths of an output directory outside it as they are; the commands run
	// in dir, where they write their files.
	cmd := exec.Command(localUp, "--bin-dir", binDir, "--output-dir", filepath.Join(dir, "local"))
	cmd.Dir = root
	logFile, err := os.Create(filepath.Join(dir, "local-up.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd.Stderr = logFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			if err != nil {
				log, _ := os.ReadFile(logFile.Name())
				t.Errorf("local-up did not stop cleanly on Ctrl-C: %v; it logged:\n%s", err, log)
			}
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			t.Error("local-up did not stop within a minute of Ctrl-C")
		}
	})
	printed, ready := readUntilReady(stdout, 3*time.Minute)
	go func() { exited <- cmd.Wait() }()
	if !ready {
		log, _ := os.ReadFile(logFile.Name())
		t.Fatalf("local-up never printed %q; it printed:\n%s\nand logged:\n%s", readyLine, printed, log)
	}

	commands, logs := printedCommands(printed)
	if len(commands) < 20 {
		t.Fatalf("found %d commands in what make run printed, want every one of its instructions:\n%s", len(commands), printed)
	}
	for _, command := range commands {
		runPrinted(t, dir, env, command)
	}
	for _, log := range logs {
		if info, err := os.Stat(log); err != nil || info.Size() == 0 {
			t.Errorf("the printed log %s: %v", log, err)
		}
	}
}

const readyLine = "gridview is ready; press Ctrl-C to stop and clean up."

// readUntilReady returns what local-up printed up to readyLine, and whether
// it got there within timeout; the rest of stdout is drained.
func readUntilReady(stdout io.Reader, timeout time.Duration) (string, bool) {
	lines := make(chan string)
	go func() {
		defer close(lines)
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			lines <- scanner.Text()
		}
	}()
	var printed strings.Builder
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				return printed.String(), false
			}
			printed.WriteString(line + "\n")
			if line == readyLine {
				go func() {
					for range lines {
					}
				}()
				return printed.String(), true
			}
		case <-deadline:
			return printed.String(), false
		}
	}
}

// logsLine is how local-up names its logs: dir/{a,b}.log.
var logsLine = regexp.MustCompile(`^Logs: (\S+)/\{([^}]+)\}\.log$`)

// printedCommands are the indented lines of local-up's instructions, and
// the log files its Logs line names.
func printedCommands(printed string) (commands, logs []string) {
	for line := range strings.Lines(printed) {
		line = strings.TrimRight(line, "\n")
		if m := logsLine.FindStringSubmatch(line); m != nil {
			for _, name := range strings.Split(m[2], ",") {
				logs = append(logs, filepath.Join(m[1], name+".log"))
			}
		}
		if command, ok := strings.CutPrefix(line, "  "); ok {
			commands = append(commands, command)
		}
	}
	return commands, logs
}

// outputFile is the file a printed command writes instead of stdout.
var outputFile = regexp.MustCompile(`(?:> |--output-file )(\S+)`)

var watchFlag = regexp.MustCompile(`\s-w(\s|$)`)

// runPrinted runs one printed command through a shell, as a user pastes it.
// A watch (-w) runs for a few seconds and must print the current state; any
// other command must succeed and print something, or write its file.
func runPrinted(t *testing.T, dir string, env []string, command string) {
	t.Helper()
	watch := watchFlag.MatchString(command)
	timeout := time.Minute
	if watch {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", command)
	cmd.Dir, cmd.Env = dir, env
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if watch && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = nil
	}
	if err != nil || stderr.Len() > 0 {
		t.Errorf("%s\nfailed: %v\nstderr: %s\nstdout: %s", command, err, stderr.String(), out)
		return
	}
	if m := outputFile.FindStringSubmatch(command); m != nil {
		if info, err := os.Stat(filepath.Join(dir, m[1])); err != nil || info.Size() == 0 {
			t.Errorf("%s\ndid not write %s: %v", command, m[1], err)
		}
		return
	}
	if strings.TrimSpace(string(out)) == "" {
		t.Errorf("%s\nprinted nothing", command)
	}
}
