package timeline

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// State is what the timeline knows of an App at one moment: a snapshot
// kubeview fills from the App's fleet row (kubeview.AppRow: Health.Status
// and Message, Sync.Status and Message, Sync.Drifted, Version) and from
// the container statuses of the App's pods it already caches. It holds no
// kubeview type, so this package imports nothing of the project's caches.
type State struct {
	// Health is the App's health code (kubeview.HealthStatus as a string).
	Health        string
	HealthMessage string
	// Sync is the App's sync verdict (kubeview.SyncStatus as a string).
	Sync        string
	SyncMessage string
	Drifted     bool
	// Revision is the declared version (AppRow.Version).
	Revision string
	// Containers are the containers of the App's pods, in any order
	// (ContainersOf reads them from the pods kubeview caches); at most
	// MaxContainers are read.
	Containers []Container
}

// Container is one container of one pod of the App.
type Container struct {
	Pod, Name string
	Restarts  int32
	// LastTermination is the reason of the last termination
	// (status.lastState.terminated.reason), "OOMKilled" for an OOM kill.
	LastTermination string
	// Waiting is the reason the container waits (state.waiting.reason),
	// "CrashLoopBackOff" for a crash loop.
	Waiting string
}

// Container reasons the detector knows.
const (
	ReasonOOMKilled        = "OOMKilled"
	ReasonCrashLoopBackOff = "CrashLoopBackOff"
)

// Drift states of a KindDrift entry.
const (
	DriftDrifted = "drifted"
	DriftClean   = "clean"
)

// MaxContainers bounds the containers of a State that the detector reads.
const MaxContainers = 512

func (c Container) ref() string { return c.Pod + "/" + c.Name }

// Transitions returns the entries that record the change from prev to
// cur, at now, in a fixed order: a deploy (the declared revision changed,
// From and To the revisions, both known), health, sync, drift, then per
// container (by pod, then name) restart, OOM kill, crash loop. Equal
// states give none.
//
// A container is matched by pod and name: a container of a new pod is not
// a restart of the old pod's, unless it has restarted already (From "0").
// An OOM kill is recorded when the last termination becomes OOMKilled, or
// stays OOMKilled while the restart count grows (killed again); a crash
// loop when the container starts waiting in CrashLoopBackOff.
func Transitions(app App, prev, cur State, now time.Time) []Entry {
	var out []Entry
	add := func(k Kind, from, to, msg, ref string) {
		out = append(out, Entry{Time: now, App: app, Kind: k, From: from, To: to, Message: msg, Ref: ref, Revision: cur.Revision, Count: 1}.normalize())
	}
	if prev.Revision != cur.Revision && prev.Revision != "" && cur.Revision != "" {
		add(KindDeploy, prev.Revision, cur.Revision, "declared "+cur.Revision, "")
	}
	if prev.Health != cur.Health {
		add(KindHealth, prev.Health, cur.Health, cur.HealthMessage, "")
	}
	if prev.Sync != cur.Sync {
		add(KindSync, prev.Sync, cur.Sync, cur.SyncMessage, "")
	}
	if prev.Drifted != cur.Drifted {
		from, to := DriftClean, DriftDrifted
		if !cur.Drifted {
			from, to = to, from
		}
		add(KindDrift, from, to, "", "")
	}
	before := make(map[string]Container, min(len(prev.Containers), MaxContainers))
	for _, c := range prev.Containers[:min(len(prev.Containers), MaxContainers)] {
		before[c.ref()] = c
	}
	sorted := slices.Clone(cur.Containers[:min(len(cur.Containers), MaxContainers)])
	slices.SortFunc(sorted, func(a, b Container) int {
		return cmp.Or(cmp.Compare(a.Pod, b.Pod), cmp.Compare(a.Name, b.Name))
	})
	for _, c := range sorted {
		p, seen := before[c.ref()]
		restarted := c.Restarts > p.Restarts // an unseen container has p.Restarts 0
		if restarted {
			msg := ""
			if c.LastTermination != "" {
				msg = "last termination: " + c.LastTermination
			}
			add(KindRestart, strconv.Itoa(int(p.Restarts)), strconv.Itoa(int(c.Restarts)), msg, c.ref())
		}
		if c.LastTermination == ReasonOOMKilled && (!seen || p.LastTermination != ReasonOOMKilled || restarted) {
			add(KindOOM, "", ReasonOOMKilled, "", c.ref())
		}
		if c.Waiting == ReasonCrashLoopBackOff && p.Waiting != ReasonCrashLoopBackOff {
			add(KindCrashLoop, p.Waiting, ReasonCrashLoopBackOff, "", c.ref())
		}
	}
	return out
}

// ContainersOf returns the containers of pods for a State: each
// container's restart count, last termination reason and waiting reason,
// which kubeview's trimmed pod cache keeps (init containers included, as
// "init:" + name). At most MaxContainers are returned.
func ContainersOf(pods []*corev1.Pod) []Container {
	var out []Container
	for _, p := range pods {
		for _, set := range [...]struct {
			prefix string
			ss     []corev1.ContainerStatus
		}{{"init:", p.Status.InitContainerStatuses}, {"", p.Status.ContainerStatuses}} {
			for _, cs := range set.ss {
				if len(out) == MaxContainers {
					return out
				}
				c := Container{Pod: p.Name, Name: set.prefix + cs.Name, Restarts: cs.RestartCount}
				if t := cs.LastTerminationState.Terminated; t != nil {
					c.LastTermination = t.Reason
				}
				if w := cs.State.Waiting; w != nil {
					c.Waiting = w.Reason
				}
				out = append(out, c)
			}
		}
	}
	return out
}
