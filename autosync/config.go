package autosync

import (
	"errors"
	"fmt"
	"time"

	"github.com/hanzoai/deploy-web/envconfig"
)

// The bounds and defaults of an environment's auto-sync settings are the
// config's (envconfig.MinAutoSyncInterval, DefaultAutoSyncInterval,
// DefaultSelfHealGrace): one definition, read here.

// maxBackoffFactor caps the wait after errors at this many intervals.
const maxBackoffFactor = 8

// Environment is one environment's auto-sync settings.
type Environment struct {
	// Name is the environment's name (envconfig.Environment.Name).
	Name string
	// Enabled turns auto-sync on; SelfHeal also puts drifted objects back.
	Enabled, SelfHeal bool
	// Interval between checks (envconfig.DefaultAutoSyncInterval when
	// zero; at least envconfig.MinAutoSyncInterval).
	Interval time.Duration
	// Grace is how long an object stays drifted before it is put back,
	// and the shortest time between two heals
	// (envconfig.DefaultSelfHealGrace when zero).
	Grace time.Duration
	// Protected environments are never acted on; enabling auto-sync on
	// one is refused.
	Protected bool
}

// normalise checks e and fills its defaults; i is its index in the
// options, for the error.
func (e Environment) normalise(i int) (Environment, error) {
	where := fmt.Sprintf("autosync: environments[%d] (%q)", i, e.Name)
	switch {
	case e.Name == "":
		return e, fmt.Errorf("autosync: environments[%d]: the name is empty: give the environment's name", i)
	case e.Protected && (e.Enabled || e.SelfHeal):
		return e, fmt.Errorf("%s: autoSync on a protected environment: auto-sync and self-heal never act on protected environments; remove autoSync or protected", where)
	case e.SelfHeal && !e.Enabled:
		return e, fmt.Errorf("%s: autoSync.selfHeal needs autoSync.enabled: true", where)
	case e.Interval < 0, e.Interval > 0 && e.Interval < envconfig.MinAutoSyncInterval:
		return e, fmt.Errorf("%s: autoSync.interval %s: it must be at least %s", where, e.Interval, envconfig.MinAutoSyncInterval)
	case e.Grace < 0:
		return e, fmt.Errorf("%s: autoSync.grace %s is negative", where, e.Grace)
	}
	if e.Interval == 0 {
		e.Interval = envconfig.DefaultAutoSyncInterval
	}
	if e.Grace == 0 {
		e.Grace = envconfig.DefaultSelfHealGrace
	}
	return e, nil
}

// normaliseAll checks the environments, refusing duplicate names.
func normaliseAll(envs []Environment) ([]Environment, error) {
	if len(envs) == 0 {
		return nil, errors.New("autosync: no environments: give the environments whose autoSync is set")
	}
	out := make([]Environment, 0, len(envs))
	seen := map[string]bool{}
	for i, e := range envs {
		n, err := e.normalise(i)
		if err != nil {
			return nil, err
		}
		if seen[n.Name] {
			return nil, fmt.Errorf("autosync: environments[%d]: %q is listed twice", i, n.Name)
		}
		seen[n.Name] = true
		out = append(out, n)
	}
	return out, nil
}
