// Package proc starts and stops the helper processes of the local demo and
// test environment (etcd, kube-apiserver, KWOK, Hydra, ...). Each process runs
// in a process group of its own, dies with its parent (PR_SET_PDEATHSIG), and
// writes its output to a log file, so a stopped or crashed run leaves no
// orphans and something to read.
package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is one started helper process.
type Process struct {
	Name    string
	LogPath string

	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}

	mu      sync.Mutex
	waitErr error
}

// Spec says how to start a process.
type Spec struct {
	Name string   // short name, used in errors and the log file name
	Path string   // the executable
	Args []string // its arguments
	Env  []string // extra environment, appended to a minimal base
	Dir  string   // working directory and the folder of the log file
}

// Start starts spec's process in a new process group. Its stdout and stderr
// go to Dir/<Name>.log.
func Start(spec Spec) (*Process, error) {
	if _, err := os.Stat(spec.Path); err != nil {
		return nil, fmt.Errorf("proc: %s: %w", spec.Name, err)
	}
	logPath := filepath.Join(spec.Dir, spec.Name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("proc: %s: open log: %w", spec.Name, err)
	}
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Dir = spec.Dir
	cmd.Stdout = f
	cmd.Stderr = f
	cmd.Env = append(baseEnv(), spec.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("proc: start %s: %w", spec.Name, err)
	}
	p := &Process{Name: spec.Name, LogPath: logPath, cmd: cmd, log: f, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

func baseEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "LANG"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// Pid returns the process id (also its process group id).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended, and how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return true, p.waitErr
	default:
		return false, nil
	}
}

// Done is closed when the process has ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// Stop sends SIGTERM to the whole process group, waits up to grace, then
// sends SIGKILL. It is safe to call more than once.
func (p *Process) Stop(grace time.Duration) {
	pgid := p.cmd.Process.Pid
	select {
	case <-p.done:
		// The leader is gone; its group may still hold children.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return
	default:
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.done
}

// Tail returns the last n bytes of the process's log, for error messages.
func (p *Process) Tail(n int64) string {
	return TailFile(p.LogPath, n)
}

// TailFile returns the last n bytes of a file, or "" when it cannot be read.
func TailFile(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(st.Size()-n, 0)
	b, _ := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
	return string(b)
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago
// (see FreePorts).
func FreePort() (int, error) {
	ports, err := FreePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// FreePorts returns n distinct ports on 127.0.0.1 that were free a moment
// ago, chosen below the kernel's ephemeral range: a port the kernel hands
// out for ":0" is also the source port of outgoing connections, so a
// process started a moment later could find it taken by a client socket
// ("address already in use"), as happened with two control planes starting
// side by side. The ports are held until all n are chosen.
func FreePorts(n int) ([]int, error) {
	lo, hi := 10000, ephemeralLow()-1
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for tries := 0; len(ports) < n; tries++ {
		if tries > 200*n {
			return nil, fmt.Errorf("proc: no free port in %d-%d after %d tries", lo, hi, tries)
		}
		port := lo + rand.IntN(hi-lo+1)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		ls = append(ls, l)
		ports = append(ports, port)
	}
	return ports, nil
}

// ephemeralLow is the low end of the kernel's ephemeral port range
// (32768 where it cannot be read, Linux's default).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if lo, err := strconv.Atoi(f[0]); err == nil && lo > 11000 {
				return lo
			}
		}
	}
	return 32768
}

// WaitHTTP polls url until check accepts a response, ctx ends, or the process
// p (when not nil) exits.
func WaitHTTP(ctx context.Context, client *http.Client, url string, p *Process, check func(*http.Response) bool) error {
	if client == nil {
		client = &http.Client{Timeout: 2 * time.Second}
	}
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			ok := check == nil && resp.StatusCode == http.StatusOK || check != nil && check(resp)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if ok {
				return nil
			}
			last = errors.New("status " + strconv.Itoa(resp.StatusCode))
		} else {
			last = err
		}
		if p != nil {
			if exited, werr := p.Exited(); exited {
				return fmt.Errorf("proc: %s exited (%v) before %s was ready; log tail:\n%s", p.Name, werr, url, p.Tail(2000))
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("proc: waiting for %s: %w (last: %v)", url, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
