package deployplan

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/strictyaml"
)

// Catalog modes.
const (
	// CatalogModeCommit: every image of a service is tagged with the
	// catalog's application commit (the default).
	CatalogModeCommit = "commit"
	// CatalogModeVersion: each service carries its own tag (a version such
	// as 6.14.1) and digest; the commit is optional and only reported.
	CatalogModeVersion = "version"
)

// Catalog is the artifact catalog: which image each service ships, at which
// commit or version, its digest, and whether it is published; plus the
// third-party images admitted by digest.
//
//	{"commit": "3f9c2e1...", "services": [
//	  {"id": "api", "image": "registry.example.com/acme/api:3f9c2e1...",
//	   "digest": "sha256:...", "published": true}]}
//
//	{"mode": "version", "services": [
//	  {"id": "api", "image": "registry.example.com/acme/api", "tag": "6.14.1",
//	   "digest": "sha256:...", "published": true}],
//	 "thirdParty": [{"image": "docker.io/library/redis:7.4@sha256:..."}]}
type Catalog struct {
	// Mode is CatalogModeCommit (also when empty) or CatalogModeVersion.
	Mode       string            `json:"mode,omitempty"`
	Commit     string            `json:"commit"`
	Services   []CatalogService  `json:"services"`
	ThirdParty []ThirdPartyImage `json:"thirdParty,omitempty"`
}

// CatalogService is one entry of the catalog.
type CatalogService struct {
	ID    string `json:"id"`
	Image string `json:"image"`
	// Tag is the service's version in version mode (required there; the
	// image's own tag, if any, must be the same). Unused in commit mode.
	Tag       string `json:"tag,omitempty"`
	Digest    string `json:"digest"`
	Published bool   `json:"published"`
}

// ThirdPartyImage is an image the application does not build (a database,
// a proxy), admitted by repository and sha256 digest; the tag is optional.
type ThirdPartyImage struct {
	Image string `json:"image"`
}

// versionMode reports whether the catalog is in version mode.
func (c *Catalog) versionMode() bool { return c.Mode == CatalogModeVersion }

// TaggedWith reports whether tag names the catalog's commit in commit
// mode: the commit itself or its first 7 or more characters, the tags the
// plan admits for the catalog's services. Always false in version mode.
func (c *Catalog) TaggedWith(tag string) bool {
	return !c.versionMode() && commitMatches(tag, c.Commit)
}

// commitRE is what a catalog commit may be: 7 to 40 lowercase hex digits.
var commitRE = regexp.MustCompile(`^[0-9a-f]{7,40}$`)

// ValidCommit reports whether s is a commit as the catalog and
// --expect-commit take it: 7 to 40 lowercase hex characters.
func ValidCommit(s string) bool { return commitRE.MatchString(s) }

// maxCatalogEntries bounds the services and third-party images of a catalog.
const maxCatalogEntries = 10000

// maxCatalogNodes bounds the JSON values of a catalog as it is read (a
// service is 11: its object, five keys and their values), so a hostile
// catalog stops at a few tens of megabytes of tree.
const maxCatalogNodes = 12*maxCatalogEntries + 100

// ParseCatalog decodes and checks a catalog. Keys are exact (strictyaml:
// another spelling, a duplicate or an unknown key is an error); every
// mistake is a *ConfigError naming the field ("catalog.commit",
// "catalog.services[2].tag", ...), joined with errors.Join, so the command
// line exits 2 on it.
func ParseCatalog(data []byte) (*Catalog, error) {
	var c Catalog
	if err := strictyaml.UnmarshalJSON(data, &c, strictyaml.Options{Root: "catalog", MaxNodes: maxCatalogNodes}); err != nil {
		return nil, catalogError("catalog: ", envconfig.StrictErrors(err))
	}
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, &envconfig.ConfigError{Field: "catalog." + field, Message: fmt.Sprintf(format, a...)})
	}
	if len(c.Services)+len(c.ThirdParty) > maxCatalogEntries {
		bad("services", "%d entries, more than %d", len(c.Services)+len(c.ThirdParty), maxCatalogEntries)
		return nil, catalogError("", errors.Join(errs...))
	}
	switch c.Mode {
	case "", CatalogModeCommit:
		c.Mode = CatalogModeCommit
		switch {
		case c.Commit == "":
			bad("commit", "required in commit mode (7 to 40 hex characters); for images tagged with versions use \"mode\": \"version\"")
		case !commitRE.MatchString(c.Commit):
			bad("commit", "%q is not a commit (7 to 40 lowercase hex characters); for images tagged with versions use \"mode\": \"version\" with a tag per service", c.Commit)
		}
	case CatalogModeVersion:
		if c.Commit != "" && !commitRE.MatchString(c.Commit) {
			bad("commit", "%q is not a commit (7 to 40 lowercase hex characters); in version mode it is optional and only reported", c.Commit)
		}
	default:
		bad("mode", "%q: want \"commit\" (the default) or \"version\"", c.Mode)
	}
	ids := map[string]bool{}
	releases := map[string]bool{} // repository and tag (version mode)
	for i, s := range c.Services {
		f := fmt.Sprintf("services[%d]", i)
		if s.ID == "" {
			bad(f+".id", "required")
		} else if ids[s.ID] {
			bad(f+".id", "%q is used twice", s.ID)
		}
		ids[s.ID] = true
		var img Image
		var err error
		if s.Image == "" {
			bad(f+".image", "required")
		} else if img, err = ParseImage(s.Image); err != nil {
			bad(f+".image", "%v", err)
		}
		if s.Digest != "" && !ValidDigest(s.Digest) {
			bad(f+".digest", "%q is not sha256:<64 hex>", s.Digest)
		}
		if c.Mode != CatalogModeVersion {
			if s.Tag != "" {
				bad(f+".tag", "only in version mode: in commit mode every image is tagged with the catalog commit")
			}
			continue
		}
		switch {
		case s.Tag == "":
			bad(f+".tag", "required in version mode (the version the service ships, e.g. 6.14.1)")
		case !validTag(s.Tag):
			bad(f+".tag", "%q is not a valid image tag", s.Tag)
		case err == nil && img.Tag != "" && img.Tag != s.Tag:
			bad(f+".image", "tag %q differs from the service's tag %q: drop the tag from the image or make them equal", img.Tag, s.Tag)
		case err == nil && releases[img.Repository+":"+s.Tag]:
			bad(f+".tag", "%s at %q is listed twice: a version-mode catalog may list several releases of an image, each once", img.Repository, s.Tag)
		}
		if err == nil {
			releases[img.Repository+":"+s.Tag] = true
		}
	}
	for i, t := range c.ThirdParty {
		f := fmt.Sprintf("thirdParty[%d].image", i)
		if t.Image == "" {
			bad(f, "required")
			continue
		}
		img, err := ParseImage(t.Image)
		switch {
		case err != nil:
			bad(f, "%v", err)
		case img.Digest == "":
			bad(f, "%q has no digest: a third-party image is admitted by repository and sha256 digest (repository[:tag]@sha256:<64 hex>)", t.Image)
		case !ValidDigest(img.Digest):
			bad(f, "%q: digest %q is not sha256:<64 hex>", t.Image, img.Digest)
		case img.Tag != "" && !validTag(img.Tag):
			bad(f, "%q: %q is not a valid image tag", t.Image, img.Tag)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, catalogError("", err)
	}
	return &c, nil
}

var tagRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// validTag reports whether s is a valid image tag (the registry grammar).
func validTag(s string) bool { return tagRE.MatchString(s) }

// lookupThirdParty returns the third-party entry with image's repository
// and digest; byRepo is true when some entry has the repository at all.
func (c *Catalog) lookupThirdParty(image Image) (tp Image, byRepo, ok bool) {
	for _, t := range c.ThirdParty {
		ti, err := ParseImage(t.Image)
		if err != nil || ti.Repository != image.Repository {
			continue
		}
		byRepo = true
		if ti.Digest == image.Digest && (ti.Tag == "" || image.Tag == "" || ti.Tag == image.Tag) {
			return ti, true, true
		}
	}
	return Image{}, byRepo, false
}

// Lookup returns the catalog entry whose image has the same repository as
// image (normalised: "nginx" is "index.docker.io/library/nginx"); in
// version mode, the one of image's tag when the catalog lists several.
func (c *Catalog) Lookup(image Image) (CatalogService, bool) {
	if m := c.match(image); m.svc != nil {
		return *m.svc, true
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
