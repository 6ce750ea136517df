package roles

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// Limits of a roles file and of what is read of a person's claims.
const (
	// MaxFileBytes bounds a roles file.
	MaxFileBytes = 1 << 20
	// MaxBindings bounds the bindings of a file.
	MaxBindings = 1000
	// MaxEntries bounds the groups (or emails) of one binding.
	MaxEntries = 1000
	// MaxGroups is how many of a person's groups are read (the first
	// ones); an IdP that sends more loses the rest, never gains anything.
	MaxGroups = 1000
	// MaxNameBytes bounds a group or email, in a file and in a claim.
	MaxNameBytes = 1024
)

// Binding grants Role to the people it names (by group or email), inside
// Scope. Logs lets a viewer, deployer or approver read logs inside Scope;
// Operate lets it take day-2 actions (roles.Operate) inside Scope.
type Binding struct {
	Role    Role        `json:"role"`
	Groups  []string    `json:"groups,omitempty"`
	Emails  []string    `json:"emails,omitempty"`
	Scope   scope.Scope `json:"scope,omitzero"`
	Logs    bool        `json:"logs,omitempty"`
	Operate bool        `json:"operate,omitempty"`
}

// file is the roles file.
type file struct {
	Bindings []Binding `json:"bindings"`
}

// fileKeys are the exact keys of each level of the file, for the
// case-sensitive check (encoding/json alone matches keys case-insensitively).
type fileKeys struct{ top, binding, scope []string }

func knownKeys() fileKeys {
	return fileKeys{
		top:     []string{"bindings"},
		binding: []string{"role", "groups", "emails", "scope", "logs", "operate"},
		scope:   []string{"clusters", "environments", "namespaces", "apps"},
	}
}

// Load reads and parses the roles file at path; see Parse.
func Load(path string, opts Options) (*Policy, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("roles: --roles: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("roles: --roles: read %s: %w", path, err)
	}
	return Parse(path, data, opts)
}

// Parse builds a Policy from a roles file's content; name is the file's
// name for errors and Explain. Every problem is an error naming the file
// and the path in it: more than MaxFileBytes, YAML that does not parse, a
// duplicate or unknown key (keys are case-sensitive), a wrong type, no
// bindings, an unknown role, a binding naming nobody, an empty, padded or
// overlong group or email, an email without '@', a bad scope selector, a
// scoped superadmin.
func Parse(name string, data []byte, opts Options) (*Policy, error) {
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("roles: %s: larger than %d bytes", name, MaxFileBytes)
	}
	f, err := decodeFile(data)
	if err != nil {
		return nil, fmt.Errorf("roles: %s: %w", name, err)
	}
	if err := f.validate(); err != nil {
		return nil, fmt.Errorf("roles: %s: %w", name, err)
	}
	return newPolicy(name, f.Bindings, opts), nil
}

// decodeFile decodes a roles file strictly: YAML with no duplicate keys,
// exact (case-sensitive) keys only, the types of file. It is the one place
// that knows the encoding, so a shared strict decoder can replace it.
func decodeFile(data []byte) (file, error) {
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return file{}, fmt.Errorf("not valid YAML: %w", err)
	}
	var generic any
	if err := json.Unmarshal(j, &generic); err != nil {
		return file{}, fmt.Errorf("not valid YAML: %w", err)
	}
	if err := checkKeys(generic); err != nil {
		return file{}, err
	}
	var f file
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return file{}, fmt.Errorf("%s: is a %s, want a %s", te.Field, te.Value, jsonKind(te.Type.Kind().String()))
		}
		return file{}, err
	}
	return f, nil
}

// jsonKind names a Go kind the way a YAML author thinks of it.
func jsonKind(k string) string {
	switch k {
	case "slice":
		return "list"
	case "struct":
		return "mapping"
	}
	return k
}

// checkKeys checks every mapping's keys of a decoded file against
// fileKeys, exactly.
func checkKeys(v any) error {
	known := knownKeys()
	if v == nil {
		return errors.New("empty file: write bindings: [...]")
	}
	top, ok := v.(map[string]any)
	if !ok {
		return errors.New("the file is not a mapping: write bindings: [...]")
	}
	if err := onlyKeys(top, known.top, ""); err != nil {
		return err
	}
	list, _ := top["bindings"].([]any)
	for i, b := range list {
		bm, ok := b.(map[string]any)
		if !ok {
			continue // the typed decode names the wrong type
		}
		p := "bindings[" + strconv.Itoa(i) + "]"
		if err := onlyKeys(bm, known.binding, p); err != nil {
			return err
		}
		if sm, ok := bm["scope"].(map[string]any); ok {
			if err := onlyKeys(sm, known.scope, p+".scope"); err != nil {
				return err
			}
		}
	}
	return nil
}

// onlyKeys reports the first key of m (in sorted order) not in allowed.
func onlyKeys(m map[string]any, allowed []string, path string) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			if strings.IndexFunc(k, textfmt.Hidden) >= 0 {
				k = strconv.Quote(k) // a hostile key reads as it is written
			}
			at := k
			if path != "" {
				at = path + "." + k
			}
			return fmt.Errorf("%s: unknown key (keys are case-sensitive; known: %s)", at, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// validate checks the values of a decoded file.
func (f file) validate() error {
	if len(f.Bindings) == 0 {
		return errors.New("bindings: empty: give at least one binding, or no --roles for superadmins only")
	}
	if len(f.Bindings) > MaxBindings {
		return fmt.Errorf("bindings: %d bindings, at most %d", len(f.Bindings), MaxBindings)
	}
	for i, b := range f.Bindings {
		if err := b.validate("bindings[" + strconv.Itoa(i) + "]"); err != nil {
			return err
		}
	}
	return nil
}

// validate checks one binding; path names it.
func (b Binding) validate(path string) error {
	if !slices.Contains(Roles(), b.Role) {
		return fmt.Errorf("%s.role: %q is not a role: use one of viewer, deployer, approver, superadmin", path, b.Role)
	}
	if len(b.Groups) == 0 && len(b.Emails) == 0 {
		return fmt.Errorf("%s: names nobody: give groups or emails", path)
	}
	for _, l := range []struct {
		key  string
		list []string
	}{{"groups", b.Groups}, {"emails", b.Emails}} {
		if len(l.list) > MaxEntries {
			return fmt.Errorf("%s.%s: %d entries, at most %d", path, l.key, len(l.list), MaxEntries)
		}
		for i, s := range l.list {
			if err := validName(s, l.key == "emails"); err != nil {
				return fmt.Errorf("%s.%s[%d]: %w", path, l.key, i, err)
			}
		}
	}
	if b.Role == Superadmin && !b.Scope.IsZero() {
		return fmt.Errorf("%s.scope: a superadmin binding is unscoped (superadmins may do everything everywhere): remove the scope, or use deployer or approver", path)
	}
	return b.Scope.Validate(path + ".scope")
}

// validName checks a group or (email true) an email of a file.
func validName(s string, email bool) error {
	switch {
	case s == "":
		return errors.New("empty: an empty name would match nobody")
	case len(s) > MaxNameBytes:
		return fmt.Errorf("%d bytes, at most %d", len(s), MaxNameBytes)
	case !utf8.ValidString(s):
		return fmt.Errorf("%q is not UTF-8", s)
	case strings.TrimSpace(s) != s:
		return fmt.Errorf("%q has leading or trailing white space, which no claim matches", s)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return fmt.Errorf("%q has a control character", s)
	case strings.IndexFunc(s, textfmt.Hidden) >= 0:
		return fmt.Errorf("%q has a format character (U+202E and the like), which no claim should carry: write the name as it reads", s)
	}
	if email {
		local, domain, ok := strings.Cut(s, "@")
		if !ok || local == "" || domain == "" || strings.Contains(domain, "@") || strings.IndexFunc(s, unicode.IsSpace) >= 0 {
			return fmt.Errorf("%q is not an email address (local@domain, no spaces)", s)
		}
	}
	return nil
}
