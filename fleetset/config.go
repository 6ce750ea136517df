// Package fleetset is the layer over several clusters: the clusters file
// (--clusters), and the application list merged over one kubeview cache per
// cluster, each row naming its cluster, with per-cluster counts. kubeview
// stays single-cluster; nothing here knows about HTTP.
package fleetset

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/hanzoai/deploy-web/internal/capread"
	"github.com/hanzoai/deploy-web/internal/strictyaml"
)

// DefaultAppResource is the App resource when a cluster names none.
const DefaultAppResource = "apps.v1.hanzo.ai"

// MaxClusters bounds the clusters file.
const MaxClusters = 100

// Cluster is one entry of the clusters file: how to reach a cluster and
// what to read in it. Credentials come only from files (the kubeconfig, or
// the pod's service account with inCluster); none is ever shown or logged.
type Cluster struct {
	// Name is how the console names the cluster (URLs, rows, filters,
	// metrics, audit): a DNS label, unique in the file.
	Name string `json:"name"`
	// Kubeconfig is a kubeconfig file (relative to the clusters file).
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// Context is a context of Kubeconfig (default: its current context).
	Context string `json:"context,omitempty"`
	// InCluster uses the pod's service account instead of a kubeconfig.
	InCluster bool `json:"inCluster,omitempty"`
	// Namespaces are the platform namespaces of this cluster: the only
	// ones read or written.
	Namespaces []string `json:"namespaces"`
	// AppResource is the App resource as resource.version.group
	// (default apps.v1.hanzo.ai).
	AppResource string `json:"appResource,omitempty"`
}

// dnsLabel is an RFC 1123 label, as Kubernetes checks namespace names.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// ValidName reports whether s can name a cluster (a DNS label).
func ValidName(s string) bool { return dnsLabel.MatchString(s) }

// LoadFile reads and validates a clusters file: a YAML list of clusters.
// Relative kubeconfig paths are resolved against the file's folder.
func LoadFile(path string) ([]Cluster, error) {
	data, err := capread.File(path, maxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("fleetset: read clusters file: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("fleetset: %w", err)
	}
	cs, err := Parse(data, filepath.Dir(abs), fileExists)
	if err != nil {
		return nil, fmt.Errorf("fleetset: clusters file %s: %w", path, err)
	}
	return cs, nil
}

// maxFileBytes caps the clusters file: the size of the Secret it is
// mounted from.
const maxFileBytes = 1 << 20

// fileExists is Parse's check of a kubeconfig path.
func fileExists(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return errors.New("no such file")
		}
		if errors.Is(err, os.ErrPermission) {
			return errors.New("permission denied")
		}
		return errors.New("cannot be read")
	}
	if !fi.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	return nil
}

// Parse parses and validates a clusters file's content; dir resolves
// relative kubeconfig paths and check (nil: none) says why a kubeconfig
// path is unusable. Errors name the field:
// `clusters[1] (eu-west).kubeconfig: ...`. Keys are exact (strictyaml):
// another spelling of a key, a key written twice or an unknown key is an
// error naming its line and path.
func Parse(data []byte, dir string, check func(path string) error) ([]Cluster, error) {
	var cs []Cluster
	if err := strictyaml.Unmarshal(data, &cs, strictyaml.Options{Root: "clusters"}); err != nil {
		return nil, err
	}
	for i := range cs {
		if cs[i].AppResource == "" {
			cs[i].AppResource = DefaultAppResource
		}
		if k := cs[i].Kubeconfig; k != "" && !filepath.IsAbs(k) && dir != "" {
			cs[i].Kubeconfig = filepath.Join(dir, k)
		}
	}
	if err := Validate(cs, check); err != nil {
		return nil, err
	}
	return cs, nil
}

// Validate checks every field of every cluster and returns all problems,
// each naming its field.
func Validate(cs []Cluster, check func(path string) error) error {
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, a...)))
	}
	switch {
	case len(cs) == 0:
		bad("clusters", "give at least one cluster")
	case len(cs) > MaxClusters:
		bad("clusters", "%d clusters, at most %d", len(cs), MaxClusters)
	}
	names := map[string]int{}
	targets := map[[2]string]int{} // kubeconfig and context -> first entry
	inCluster := -1
	for i, c := range cs {
		p := fmt.Sprintf("clusters[%d]", i)
		if ValidName(c.Name) {
			p += " (" + c.Name + ")"
		}
		switch {
		case c.Name == "":
			bad(p+".name", "required")
		case !ValidName(c.Name):
			bad(p+".name", "%q is not a DNS label (lower-case letters, digits and '-', at most 63, starting and ending with a letter or digit)", c.Name)
		default:
			if j, dup := names[c.Name]; dup {
				bad(p+".name", "%q is also clusters[%d]'s name: names must be unique", c.Name, j)
			} else {
				names[c.Name] = i
			}
		}
		switch {
		case c.InCluster && c.Kubeconfig != "":
			bad(p, "give exactly one of kubeconfig and inCluster: true, not both")
		case !c.InCluster && c.Kubeconfig == "":
			bad(p+".kubeconfig", "required (or inCluster: true)")
		case c.InCluster && c.Context != "":
			bad(p+".context", "inCluster: true takes no context")
		case c.InCluster && inCluster >= 0:
			bad(p+".inCluster", "clusters[%d] already uses the in-cluster configuration: it is one cluster", inCluster)
		case c.InCluster:
			inCluster = i
		default:
			target := [2]string{filepath.Clean(c.Kubeconfig), c.Context}
			if j, dup := targets[target]; dup {
				bad(p+".context", "clusters[%d] already reads %s, context %s: it is one cluster; list it once", j, c.Kubeconfig, orCurrent(c.Context))
			} else {
				targets[target] = i
			}
			if check != nil {
				if err := check(c.Kubeconfig); err != nil {
					bad(p+".kubeconfig", "%s: %v", c.Kubeconfig, err)
				}
			}
		}
		if c.Context != "" && (len(c.Context) > 253 || strings.ContainsFunc(c.Context, func(r rune) bool { return r < 0x20 || r == 0x7f })) {
			bad(p+".context", "not a context name")
		}
		if len(c.Namespaces) == 0 {
			bad(p+".namespaces", "give at least one platform namespace")
		}
		seen := map[string]bool{}
		for j, ns := range c.Namespaces {
			switch {
			case !dnsLabel.MatchString(ns):
				bad(fmt.Sprintf("%s.namespaces[%d]", p, j), "%q is not a namespace name (a DNS label)", ns)
			case seen[ns]:
				bad(fmt.Sprintf("%s.namespaces[%d]", p, j), "%q is listed twice", ns)
			}
			seen[ns] = true
		}
		if _, err := ParseAppResource(c.AppResource); err != nil {
			bad(p+".appResource", "%v", err)
		}
	}
	return errors.Join(errs...)
}

// orCurrent names a context for a message ("" is the kubeconfig's current
// context).
func orCurrent(context string) string {
	if context == "" {
		return "(its current context)"
	}
	return fmt.Sprintf("%q", context)
}

// ParseAppResource parses resource.version.group (apps.v1.hanzo.ai).
func ParseAppResource(s string) (schema.GroupVersionResource, error) {
	gvr, _ := schema.ParseResourceArg(s)
	if gvr == nil || gvr.Resource == "" || gvr.Version == "" || gvr.Group == "" {
		return schema.GroupVersionResource{}, fmt.Errorf("%q is not resource.version.group (like apps.v1.hanzo.ai)", s)
	}
	return *gvr, nil
}

// GVR is the cluster's App resource (valid after Validate).
func (c Cluster) GVR() schema.GroupVersionResource {
	gvr, _ := ParseAppResource(c.AppResource)
	return gvr
}

// RESTConfig builds the cluster's client configuration from its
// kubeconfig (and context) or the in-cluster service account. Errors
// name the cluster and never carry credentials.
func (c Cluster) RESTConfig() (*rest.Config, error) {
	if c.InCluster {
		rc, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("fleetset: cluster %s: in-cluster configuration: %w", c.Name, err)
		}
		return rc, nil
	}
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: c.Kubeconfig}
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: c.Context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("fleetset: cluster %s: kubeconfig %s: %w", c.Name, c.Kubeconfig, err)
	}
	return rc, nil
}

// DefaultName is the name of the one cluster described by flags when no
// clusters file is given: "in-cluster" for the in-cluster configuration,
// else the context's name made a DNS label ("in-cluster" when nothing of
// it is left).
func DefaultName(inCluster bool, context string) string {
	if inCluster || context == "" {
		return "in-cluster"
	}
	var b strings.Builder
	for _, r := range strings.ToLower(context) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := b.String()
	if len(s) > 63 {
		s = s[len(s)-63:] // the end of an EKS/GKE context is its cluster
	}
	s = strings.Trim(s, "-")
	if !ValidName(s) {
		return "in-cluster"
	}
	return s
}

// Names returns the clusters' names, in file order.
func Names(cs []Cluster) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

// Sorted returns a copy of the names, sorted.
func Sorted(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return out
}
