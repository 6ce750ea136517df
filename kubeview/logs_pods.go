package kubeview

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// appPods returns the cached pods of the App's tree: pods whose owner chain
// (ReplicaSet, Job, workload) leads to the App, not merely pods carrying its
// instance label, so user input (?pod=) never reaches another pod.
func (c *Cache) appPods(namespace, app string) []*corev1.Pod {
	a, err := c.LookupApp(namespace, app)
	if err != nil {
		return nil
	}
	var out []*corev1.Pod
	for _, n := range buildTree(a, c, c.opts.AppResource.GroupVersion()).Nodes {
		if n.Kind != "Pod" || n.Group != "" {
			continue
		}
		if p, ok := c.get(namespace, "Pod", n.Name).(*corev1.Pod); ok && string(p.UID) == n.UID {
			out = append(out, p)
		}
	}
	return out
}

// Pods lists an App's pods, newest first.
func (l *Logs) Pods(namespace, app string) []LogPod {
	pods := sortedPods(l.src.appPods(namespace, app))
	out := make([]LogPod, 0, len(pods))
	for _, p := range pods {
		out = append(out, logPod(p, app))
	}
	return out
}

func logPod(p *corev1.Pod, app string) LogPod {
	lp := LogPod{
		Name: p.Name, Phase: string(p.Status.Phase), Terminating: p.DeletionTimestamp != nil,
		Created: p.CreationTimestamp.Time, Default: defaultContainer(p, app),
	}
	for _, c := range p.Spec.Containers {
		lp.Containers = append(lp.Containers, c.Name)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			lp.Ready = c.Status == corev1.ConditionTrue
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		lp.Restarts += cs.RestartCount
	}
	if lp.Phase == "" {
		lp.Phase = string(corev1.PodPending)
	}
	return lp
}

// sortedPods orders pods newest first (then by name), without changing the
// cached slice's objects.
func sortedPods(pods []*corev1.Pod) []*corev1.Pod {
	pods = slices.Clone(pods)
	slices.SortFunc(pods, func(a, b *corev1.Pod) int {
		if c := b.CreationTimestamp.Compare(a.CreationTimestamp.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return pods
}

func running(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil
}

// choosePod picks the pod to read: the named one (which must be among the
// App's pods), else the newest running pod. With no pod to read it returns
// nil and a reason fit for users.
func choosePod(pods []*corev1.Pod, want string) (*corev1.Pod, string, error) {
	pods = sortedPods(pods)
	if want != "" {
		for _, p := range pods {
			if p.Name == want {
				return p, "", nil
			}
		}
		return nil, "", ErrPodNotInApp
	}
	for _, p := range pods {
		if running(p) {
			return p, "", nil
		}
	}
	if len(pods) == 0 {
		return nil, "the app has no pods", nil
	}
	phases := map[string]int{}
	for _, p := range pods {
		ph := string(p.Status.Phase)
		if p.DeletionTimestamp != nil {
			ph = "Terminating"
		}
		if ph == "" {
			ph = string(corev1.PodPending)
		}
		phases[ph]++
	}
	var parts []string
	for _, ph := range slices.Sorted(mapKeys(phases)) {
		parts = append(parts, strconv.Itoa(phases[ph])+" "+ph)
	}
	return nil, "the app has no running pod (" + strings.Join(parts, ", ") + "): choose a pod to read its logs", nil
}

func mapKeys(m map[string]int) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// defaultContainer is the container read when none is chosen.
func defaultContainer(p *corev1.Pod, app string) string {
	if len(p.Spec.Containers) == 0 {
		return ""
	}
	names := make([]string, 0, len(p.Spec.Containers))
	for _, c := range p.Spec.Containers {
		names = append(names, c.Name)
	}
	if d := p.Annotations["kubectl.kubernetes.io/default-container"]; slices.Contains(names, d) {
		return d
	}
	if slices.Contains(names, app) {
		return app
	}
	return names[0]
}

// chooseContainer resolves the container of a query in pod p.
func chooseContainer(p *corev1.Pod, app, want string) (string, error) {
	if want == "" {
		return defaultContainer(p, app), nil
	}
	for _, c := range p.Spec.Containers {
		if c.Name == want {
			return want, nil
		}
	}
	return "", ErrContainerNotInPod
}

func (l *Logs) findPod(ns, app, name string) *corev1.Pod {
	for _, p := range l.src.appPods(ns, app) {
		if p.Name == name {
			return p
		}
	}
	return nil
}
