package deployplan

import (
	"fmt"
	"io"
	"io/fs"
)

// ReadCatalogFS reads and parses the catalog at name in fsys (a tree of
// the source repository: the edited tree of a write-back), bounded as a
// plan reads it.
func ReadCatalogFS(fsys fs.FS, name string) (*Catalog, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("deployplan: catalog %s: %w", name, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("deployplan: catalog %s is not a regular file", name)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxCatalogBytes+1))
	if err != nil {
		return nil, fmt.Errorf("deployplan: read catalog %s: %w", name, err)
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
		return nil, fmt.Errorf("deployplan: catalog %s is larger than %d bytes", name, MaxCatalogBytes)
	}
	return ParseCatalog(data)
}
