package deployplan

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/hanzoai/deploy-web/appcr"
)

// Catalog is the artifact catalog: which image each service ships at which
// commit, its digest, and whether it is published.
//
//	{"commit": "3f9c2e1...", "services": [
//	  {"id": "api", "image": "registry.example.com/acme/api:3f9c2e1...",
//	   "digest": "sha256:...", "published": true}]}
type Catalog struct {
	Commit   string           `json:"commit"`
	Services []CatalogService `json:"services"`
}

// CatalogService is one entry of the catalog.
type CatalogService struct {
	ID        string `json:"id"`
	Image     string `json:"image"`
	Digest    string `json:"digest"`
	Published bool   `json:"published"`
}

// ParseCatalog decodes and checks a catalog.
func ParseCatalog(data []byte) (*Catalog, error) {
	var c Catalog
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("deployplan: catalog: %w", err)
	}
	var errs []error
	if c.Commit == "" {
		errs = append(errs, errors.New("commit: required"))
	}
	ids := map[string]bool{}
	for i, s := range c.Services {
		if s.ID == "" {
			errs = append(errs, fmt.Errorf("services[%d].id: required", i))
		} else if ids[s.ID] {
			errs = append(errs, fmt.Errorf("services[%d].id: %q is used twice", i, s.ID))
		}
		ids[s.ID] = true
		if s.Image == "" {
			errs = append(errs, fmt.Errorf("services[%d].image: required", i))
		} else if _, err := ParseImage(s.Image); err != nil {
			errs = append(errs, fmt.Errorf("services[%d].image: %v", i, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("deployplan: catalog: %w", err)
	}
	return &c, nil
}

// Lookup returns the catalog entry whose image has the same repository as
// image (normalised: "nginx" is "index.docker.io/library/nginx").
func (c *Catalog) Lookup(image Image) (CatalogService, bool) {
	for _, s := range c.Services {
		if ci, err := ParseImage(s.Image); err == nil && ci.Repository == image.Repository {
			return s, true
		}
	}
	return CatalogService{}, false
}

// Image is a parsed image reference.
type Image struct {
	// Raw is the reference as written.
	Raw string
	// Repository is the normalised repository, without tag or digest.
	Repository string
	// Tag and Digest may be empty.
	Tag, Digest string
}

// ParseImage splits an image reference into repository, tag and digest
// (appcr.ParseImageRef, the one parser) and normalises the repository.
func ParseImage(s string) (Image, error) {
	ref := appcr.ParseImageRef(s)
	repo, err := name.NewRepository(ref.Repository)
	if err != nil {
		return Image{}, fmt.Errorf("invalid image %q: %v", s, err)
	}
	return Image{Raw: s, Repository: repo.Name(), Tag: ref.Tag, Digest: ref.Digest}, nil
}

var digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// ValidDigest reports whether d is a sha256 digest.
func ValidDigest(d string) bool { return digestRE.MatchString(d) }

// commitMatches reports whether a tag names commit: equal, or a prefix of at
// least 7 characters (the short form).
func commitMatches(tag, commit string) bool {
	if tag == "" || commit == "" {
		return false
	}
	if tag == commit {
		return true
	}
	return len(tag) >= 7 && strings.HasPrefix(commit, tag) && isHex(tag)
}

func isHex(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}
