package deployplan

import (
	"errors"
	"strings"

	"fmt"
	"github.com/hanzoai/deploy-web/envconfig"
	"io"
	"io/fs"
)

// ReadCatalogFS reads and parses the catalog at name in fsys (a tree of
// the source repository: the edited tree of a write-back), bounded as a
// plan reads it.
func ReadCatalogFS(fsys fs.FS, name string) (*Catalog, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, &CatalogError{public: "catalog " + name + " cannot be opened", Err: err}
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, &CatalogError{public: "catalog " + name + " is not a regular file"}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxCatalogBytes+1))
	if err != nil {
		return nil, &CatalogError{public: "catalog " + name + " cannot be read", Err: err}
	}
	return ParseCatalogFile(name, data)
}

// MaxCatalogBytes caps a catalog file, as a plan reads it.
const MaxCatalogBytes = maxCatalogBytes

// maxCatalogBytes caps an artifact catalog.
const maxCatalogBytes = 8 << 20

// ParseCatalogFile parses data, the content of the catalog file name (a
// file of a tree, or a revision of it in the repository's history), within
// the plan's budget: at most MaxCatalogBytes, then ParseCatalog's strict
// decoding under its node budget.
func ParseCatalogFile(name string, data []byte) (*Catalog, error) {
	if len(data) > MaxCatalogBytes {
		return nil, &CatalogError{public: fmt.Sprintf("catalog %s is larger than %d bytes", name, MaxCatalogBytes)}
	}
	return ParseCatalog(data)
}

// CatalogError is a catalog that does not read. Public is what a user may
// read of it: the file, or each mistake as its *envconfig.ConfigError
// names it (field, line, message), never a cause from the server (Err,
// for the log).
type CatalogError struct {
	public string
	Err    error
}

func (e *CatalogError) Error() string { return "deployplan: " + e.public }

// Public is the catalog's mistake in words a user may read.
func (e *CatalogError) Public() string { return e.public }

func (e *CatalogError) Unwrap() error { return e.Err }

// catalogError is the *CatalogError of err, a *envconfig.ConfigError or
// several joined, its public text prefix and their texts one a line.
func catalogError(prefix string, err error) *CatalogError {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	lines := make([]string, 0, len(errs))
	for _, e := range errs {
		var ce *envconfig.ConfigError
		if errors.As(e, &ce) {
			lines = append(lines, ce.Public())
		} else {
			lines = append(lines, "unreadable")
		}
	}
	return &CatalogError{public: prefix + strings.Join(lines, "\n"), Err: err}
}
