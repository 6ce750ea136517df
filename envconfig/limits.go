package envconfig

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/internal/limit"
	"github.com/hanzoai/deploy-web/ociregistry"
)

// Limits bound what one environment's plan reads from the network and
// from its manifest repository. Zero fields take the defaults below; the
// environments file sets them under "limits".
type Limits struct {
	// MaxRepoBytes caps the bytes read from the repository: the fetched
	// pack of a remote repository, then the total size of the files of the
	// tree (default DefaultMaxRepoBytes).
	MaxRepoBytes int64 `json:"maxRepoBytes"`
	// MaxInflatedBytes caps what the objects of a fetched pack inflate to
	// (default DefaultMaxInflatedBytes): zeros compress ~1000:1, so a pack
	// under maxRepoBytes can hold gigabytes.
	MaxInflatedBytes int64 `json:"maxInflatedBytes"`
	// MaxRepoFiles caps the number of files of the tree (default
	// DefaultMaxRepoFiles).
	MaxRepoFiles int `json:"maxRepoFiles"`
	// MaxYAMLNodes caps the YAML nodes, aliases expanded, of all the files
	// one render decodes as YAML: the kustomizations, what they read as
	// YAML and their inline patches (default DefaultMaxYAMLNodes; the JSON
	// catalog and generator sources are not counted). kustomize holds
	// about a kilobyte per node.
	MaxYAMLNodes int64 `json:"maxYAMLNodes"`
	// SourceTimeout bounds fetching a remote repository (default
	// DefaultSourceTimeout).
	SourceTimeout metav1.Duration `json:"sourceTimeout"`
	// RegistryTimeout bounds each registry HEAD request, token exchange
	// included (default DefaultRegistryTimeout).
	RegistryTimeout metav1.Duration `json:"registryTimeout"`
	// HealthCheckTimeout bounds each health check (default
	// DefaultHealthCheckTimeout).
	HealthCheckTimeout metav1.Duration `json:"healthCheckTimeout"`
}

// Defaults of Limits: they fit a 512 MiB pod rendering a few environments.
const (
	DefaultMaxRepoBytes       = 64 << 20
	DefaultMaxRepoFiles       = 20000
	DefaultMaxYAMLNodes       = 200_000
	DefaultMaxInflatedBytes   = 128 << 20
	DefaultSourceTimeout      = time.Minute
	DefaultRegistryTimeout    = ociregistry.DefaultTimeout
	DefaultHealthCheckTimeout = 5 * time.Second
)

func (l Limits) MaxRepoBytesOrDefault() int64 { return limit.Or(l.MaxRepoBytes, DefaultMaxRepoBytes) }

func (l Limits) MaxRepoFilesOrDefault() int { return limit.Or(l.MaxRepoFiles, DefaultMaxRepoFiles) }

func (l Limits) MaxInflatedBytesOrDefault() int64 {
	return limit.Or(l.MaxInflatedBytes, DefaultMaxInflatedBytes)
}

// fetchDiskBytes caps the bytes a fetch writes to its temporary object
// store: the pack twice (as received, then stored) and its index.
func (l Limits) FetchDiskBytes() int64 { return 3 * l.MaxRepoBytesOrDefault() }

func (l Limits) MaxYAMLNodesOrDefault() int64 { return limit.Or(l.MaxYAMLNodes, DefaultMaxYAMLNodes) }

func orDefault(d metav1.Duration, def time.Duration) time.Duration {
	if d.Duration > 0 {
		return d.Duration
	}
	return def
}

func (l Limits) SourceTimeoutOrDefault() time.Duration {
	return orDefault(l.SourceTimeout, DefaultSourceTimeout)
}

func (l Limits) RegistryTimeoutOrDefault() time.Duration {
	return orDefault(l.RegistryTimeout, DefaultRegistryTimeout)
}

func (l Limits) HealthCheckTimeoutOrDefault() time.Duration {
	return orDefault(l.HealthCheckTimeout, DefaultHealthCheckTimeout)
}

// validate reports negative values (zero means the default).
func (l Limits) validate(field string, bad func(field, format string, a ...any)) {
	if l.MaxRepoBytes < 0 {
		bad(field+".maxRepoBytes", "%d must not be negative (0: the default %d)", l.MaxRepoBytes, DefaultMaxRepoBytes)
	}
	if l.MaxRepoFiles < 0 {
		bad(field+".maxRepoFiles", "%d must not be negative (0: the default %d)", l.MaxRepoFiles, DefaultMaxRepoFiles)
	}
	if l.MaxInflatedBytes < 0 {
		bad(field+".maxInflatedBytes", "%d must not be negative (0: the default %d)", l.MaxInflatedBytes, DefaultMaxInflatedBytes)
	}
	if l.MaxYAMLNodes < 0 {
		bad(field+".maxYAMLNodes", "%d must not be negative (0: the default %d)", l.MaxYAMLNodes, DefaultMaxYAMLNodes)
	}
	for _, d := range []struct {
		name string
		d    metav1.Duration
	}{{"sourceTimeout", l.SourceTimeout}, {"registryTimeout", l.RegistryTimeout}, {"healthCheckTimeout", l.HealthCheckTimeout}} {
		if d.d.Duration < 0 {
			bad(field+"."+d.name, "%s must not be negative", d.d.Duration)
		}
	}
}
