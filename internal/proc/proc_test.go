package proc

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestStopEndsTheGroup starts a shell that starts a child, and checks Stop
// ends both (the whole process group), and that the log file has output.
func TestStopEndsTheGroup(t *testing.T) {
	p, err := Start(Spec{Name: "sh", Path: "/bin/sh", Dir: t.TempDir(), Args: []string{"-c", "echo started; sleep 300 & wait"}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(p.Tail(100), "started") {
		if time.Now().After(deadline) {
			t.Fatalf("log = %q, want the process output", p.Tail(100))
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.Stop(2 * time.Second)
	if exited, _ := p.Exited(); !exited {
		t.Error("Exited() = false after Stop")
	}
	if live := liveMembers(p.Pid()); len(live) > 0 {
		t.Errorf("process group %d still has running members %v after Stop", p.Pid(), live)
	}
	p.Stop(time.Second) // a second Stop is harmless
}

// TestWaitHTTPNoticesExit: waiting for a process that died reports it with
// its log instead of waiting for the deadline.
func TestWaitHTTPNoticesExit(t *testing.T) {
	p, err := Start(Spec{Name: "fail", Path: "/bin/sh", Dir: t.TempDir(), Args: []string{"-c", "echo boom; exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	err = WaitHTTP(ctx, nil, "http://127.0.0.1:"+itoa(port)+"/", p, nil)
	if err == nil || !strings.Contains(err.Error(), "exited") || !strings.Contains(err.Error(), "boom") {
		t.Errorf("WaitHTTP = %v, want an error saying fail exited, with its log", err)
	}
	if ctx.Err() != nil {
		t.Error("WaitHTTP waited for the deadline")
	}
}

func TestStartMissingBinary(t *testing.T) {
	if _, err := Start(Spec{Name: "nope", Path: "/no/such/binary", Dir: t.TempDir()}); err == nil {
		t.Error("Start(missing binary) = nil error")
	}
}

// liveMembers lists the processes of group pgid that are not zombies (a
// killed grandchild may wait to be reaped by init, which is harmless).
func liveMembers(pgid int) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		rest := string(b)
		if i := strings.LastIndexByte(rest, ')'); i >= 0 {
			rest = rest[i+2:]
		}
		f := strings.Fields(rest)
		if len(f) > 2 && f[2] == itoa(pgid) && f[0] != "Z" {
			out = append(out, e.Name())
		}
	}
	return out
}

func itoa(n int) string {
	var b []byte
	for n > 0 || len(b) == 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// TestFreePortsAvoidTheEphemeralRange: the ports are distinct, bindable and
// below the range the kernel uses for outgoing connections' source ports.
func TestFreePortsAvoidTheEphemeralRange(t *testing.T) {
	ports, err := FreePorts(20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] {
			t.Errorf("port %d returned twice", p)
		}
		seen[p] = true
		if p < 10000 || p >= ephemeralLow() {
			t.Errorf("port %d is outside 10000-%d", p, ephemeralLow()-1)
		}
	}
}
