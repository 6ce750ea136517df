package ociregistry

import (
	"encoding/json"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
)

// maxDockerConfigBytes bounds the docker config file read for registry
// credentials.
const maxDockerConfigBytes = 1 << 20

// staticKeychain resolves registry credentials from the static `auths`
// entries of the docker config file ($DOCKER_CONFIG/config.json, else
// ~/.docker/config.json) and nothing else: credHelpers and credsStore are
// never read, so no docker-credential-* program is ever started for a
// host that a catalog or a manifest (hostile input) names. A host without
// an entry, or a file that cannot be read, is anonymous.
type staticKeychain struct {
	auths map[string]authn.AuthConfig // by CanonicalHost
}

// newStaticKeychain reads the docker config file once.
func newStaticKeychain() authn.Keychain {
	k := &staticKeychain{auths: map[string]authn.AuthConfig{}}
	dir := os.Getenv("DOCKER_CONFIG")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return k
		}
		dir = filepath.Join(home, ".docker")
	}
	f, err := os.Open(filepath.Join(dir, "config.json"))
	if err != nil {
		return k
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return k
	}
	data, err := io.ReadAll(io.LimitReader(f, maxDockerConfigBytes+1))
	if err != nil || len(data) > maxDockerConfigBytes {
		return k
	}
	var cfg struct {
		Auths map[string]authn.AuthConfig `json:"auths"`
	}
	if json.Unmarshal(data, &cfg) != nil {
		return k
	}
	// Hosts compare as the registry allowlist compares them (ASCII case
	// aside, docker.io as index.docker.io). Keys in sorted order, so that
	// of two keys naming one host the choice does not depend on map order;
	// a key spelling the host exactly wins over an alias or another case.
	keys := slices.Sorted(maps.Keys(cfg.Auths))
	exact := map[string]bool{}
	for _, key := range keys {
		a := cfg.Auths[key]
		if a == (authn.AuthConfig{}) {
			continue // an empty entry: its secret is in a credentials store
		}
		raw := authHost(key)
		host := CanonicalHost(raw)
		if host == "" || exact[host] {
			continue
		}
		if _, seen := k.auths[host]; seen && raw != host {
			continue
		}
		k.auths[host], exact[host] = a, raw == host
	}
	return k
}

// authHost is the host of a docker config `auths` key: "reg.example",
// "https://reg.example/v1/" and "http://reg.example" are all reg.example;
// Docker Hub's "https://index.docker.io/v1/" is index.docker.io.
func authHost(key string) string {
	if strings.Contains(key, "://") {
		if u, err := url.Parse(key); err == nil {
			return u.Host
		}
	}
	host, _, _ := strings.Cut(key, "/")
	return host
}

// Resolve implements authn.Keychain.
func (k *staticKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	host := CanonicalHost(r.RegistryStr())
	a, ok := k.auths[host]
	if host == "" || !ok {
		return authn.Anonymous, nil
	}
	return authn.FromConfig(a), nil
}
