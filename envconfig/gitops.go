package envconfig

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AutoSync is an environment's `autoSync:`: plan when the source's branch
// moves and apply a ready plan (actor auto-sync), and with SelfHeal put
// back a field that drifted from what deploy-web applied, after Grace.
type AutoSync struct {
	Enabled  bool     `json:"enabled"`
	SelfHeal SelfHeal `json:"selfHeal"`
	// Interval is how often the branch head is read (default
	// DefaultAutoSyncInterval, at least MinAutoSyncInterval).
	Interval metav1.Duration `json:"interval"`
	// Grace is how long a drift is left alone before self-heal puts it
	// back (default DefaultSelfHealGrace).
	Grace metav1.Duration `json:"grace"`
}

// SelfHeal is `autoSync.selfHeal`: `true` (or `{prune: fields}`) puts
// drifted objects back and removes the fields another manager added that
// git does not set; `{prune: none}` puts back what git sets and reports
// the other fields as "cannot heal" instead of removing them; `false` (or
// absent) heals nothing.
type SelfHeal struct {
	On bool
	// Prune is PruneFields or PruneNone ("" reads as PruneFields).
	Prune string
}

// The values of selfHeal.prune.
const (
	PruneFields = "fields"
	PruneNone   = "none"
)

// PrunesFields reports whether a heal removes the fields git does not set.
func (h SelfHeal) PrunesFields() bool { return h.On && h.Prune != PruneNone }

// UnmarshalJSON reads `true`, `false` or `{prune: fields|none}`.
func (h *SelfHeal) UnmarshalJSON(b []byte) error {
	var on bool
	if err := json.Unmarshal(b, &on); err == nil {
		*h = SelfHeal{On: on}
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return errors.New("selfHeal: want true, false or {prune: fields|none}")
	}
	for k := range m {
		if k != "prune" {
			return fmt.Errorf("selfHeal: unknown key %q: want {prune: fields|none}", k)
		}
	}
	p, _ := m["prune"].(string)
	if p != PruneFields && p != PruneNone {
		return fmt.Errorf("selfHeal.prune: %v: want fields or none", m["prune"])
	}
	*h = SelfHeal{On: true, Prune: p}
	return nil
}

// MarshalJSON writes the object form.
func (h SelfHeal) MarshalJSON() ([]byte, error) {
	if !h.On {
		return []byte("false"), nil
	}
	return json.Marshal(map[string]string{"prune": cmp.Or(h.Prune, PruneFields)})
}

// Bounds and defaults of AutoSync, defined here alone (package autosync,
// which acts on them, reads them).
const (
	// MinAutoSyncInterval is the shortest interval between two checks.
	MinAutoSyncInterval = 10 * time.Second
	// DefaultAutoSyncInterval applies when an environment sets none.
	DefaultAutoSyncInterval = time.Minute
	// DefaultSelfHealGrace is how long an object stays drifted before
	// self-heal puts it back, when an environment sets none.
	DefaultSelfHealGrace = 2 * time.Minute
)

// IntervalOrDefault is Interval, or DefaultAutoSyncInterval when unset.
func (a AutoSync) IntervalOrDefault() time.Duration {
	return orDefault(a.Interval, DefaultAutoSyncInterval)
}

// GraceOrDefault is Grace, or DefaultSelfHealGrace when unset.
func (a AutoSync) GraceOrDefault() time.Duration {
	return orDefault(a.Grace, DefaultSelfHealGrace)
}

// WriteBackBranch is the branch write-back commits on: writeBack.branch, or
// the source's ref. It is an error for an environment without writeBack.
func (e *Environment) WriteBackBranch() (string, error) {
	if e.WriteBack == nil {
		return "", &FieldError{Field: "writeBack", Message: "not configured: environment " + e.Name + " has no writeBack"}
	}
	return e.WriteBack.BranchFor(e.Source.Ref)
}

// validateGitOps checks writeBack and autoSync of environment e (p is its
// path in the file).
func (e *Environment) validateGitOps(p string, bad func(field, format string, a ...any)) {
	if wb := e.WriteBack; wb != nil {
		switch {
		case e.Source.Repo == "":
			bad(p+".writeBack", "needs a git source (source.repo): a local folder has no branch to commit to")
		case !writeBackScheme(e.Source.Repo):
			bad(p+".writeBack", "source.repo %q: write-back speaks https (http on this machine only) or file:///path: use one of those for the source", RedactURL(e.Source.Repo))
		case e.Source.Ref != "":
			if _, err := wb.BranchFor(e.Source.Ref); err != nil {
				reportFieldErrors(p, err, bad)
			}
		}
		reportFieldErrors(p, wb.Validate(e.Protected), bad)
		if name := wb.Credentials.TokenEnv; name != "" && !tokenEnvRE.MatchString(name) {
			// The same rule as source.tokenEnv: a config file cannot make
			// deploy-web push another of its variables to a git server.
			bad(p+".writeBack.credentials.tokenEnv", "%q: name a variable %s or %s_<NAME> (upper-case letters, digits, '_'), set to the token only", name, TokenEnvPrefix, TokenEnvPrefix)
		}
	}
	if as := e.AutoSync; as != nil {
		if e.Protected && as.Enabled {
			bad(p+".autoSync.enabled", "refused on a protected environment: a protected environment is never applied by deploy-web")
		}
		if as.SelfHeal.On && !as.Enabled {
			bad(p+".autoSync.selfHeal", "needs autoSync.enabled: true")
		}
		if e.Protected && as.SelfHeal.On {
			bad(p+".autoSync.selfHeal", "refused on a protected environment: a protected environment is never applied by deploy-web")
		}
		if d := as.Interval.Duration; d != 0 && d < MinAutoSyncInterval {
			bad(p+".autoSync.interval", "%s is below the minimum %s (0: the default %s)", d, MinAutoSyncInterval, DefaultAutoSyncInterval)
		}
		if d := as.Grace.Duration; d < 0 {
			bad(p+".autoSync.grace", "%s must not be negative (0: the default %s)", d, DefaultSelfHealGrace)
		}
	}
}

// writeBackScheme reports whether writeback can reach repo: https, http
// (checkRepoURL keeps it to this machine) or file:// without credentials in
// the URL.
func writeBackScheme(repo string) bool {
	u, err := url.Parse(repo)
	if err != nil || u.User != nil {
		return false
	}
	switch u.Scheme {
	case "https", "http", "file":
		return true
	}
	return false
}

// reportFieldErrors reports WriteBack.Validate's *FieldErrors (joined) under the
// environment's path p; any other error under p.writeBack.
func reportFieldErrors(p string, err error, bad func(field, format string, a ...any)) {
	if err == nil {
		return
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		var fe *FieldError
		if errors.As(e, &fe) {
			bad(p+"."+fe.Field, "%s", fe.Message)
		} else {
			bad(p+".writeBack", "%v", e)
		}
	}
}
