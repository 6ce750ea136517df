package gitops

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/writeback"
)

const (
	// recordA is dev's apply of commitA; the other ids are records the
	// table below reads.
	recordA      = "0123456789abcdef-0000000001"
	recordOther  = "0123456789abcdef-0000000002"
	recordLocal  = "0123456789abcdef-0000000003"
	recordFailed = "0123456789abcdef-0000000004"
	recordPause  = "0123456789abcdef-0000000005"
	recordBroken = "0123456789abcdef-0000000006"
	recordGone   = "0123456789abcdef-0000000009"
)

// memRecords is an audit store of records by id.
type memRecords map[string]audit.Record

func (m memRecords) Get(_ context.Context, id string) (audit.Record, error) {
	r, ok := m[id]
	if !ok {
		return audit.Record{}, fmt.Errorf("%w: %s", audit.ErrNotFound, id)
	}
	return r, nil
}

// memAppend keeps the records appended.
type memAppend struct{ recs []audit.Record }

func (m *memAppend) Append(_ context.Context, r audit.Record) (audit.Record, error) {
	m.recs = append(m.recs, r)
	return r, nil
}

func applied(env, commit string) audit.Record {
	return audit.Record{Environment: env, Verb: audit.VerbApply, Outcome: audit.OutcomeSucceeded, Commit: commit,
		Time: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Actor: audit.Actor{Email: "bob@example.com", Subject: "bob"}, Chain: &audit.Chain{OK: true}}
}

func envRecords() memRecords {
	other := applied("staging", commitA)
	local := applied("dev", "")
	failed := applied("dev", commitA)
	failed.Outcome = audit.OutcomeFailed
	pause := applied("dev", "")
	pause.Verb = audit.VerbPause
	broken := applied("dev", commitA)
	broken.Chain = &audit.Chain{OK: false, Reason: "edited"}
	return memRecords{recordA: applied("dev", commitA), recordOther: other, recordLocal: local, recordFailed: failed, recordPause: pause, recordBroken: broken}
}

func TestEnvRollbackRecord(t *testing.T) {
	recs := envRecords()
	for _, tt := range []struct {
		name, id string
		kind     Kind
		reason   string // "" allowed
	}{
		{"an apply of dev with its commit", recordA, 0, ""},
		{"unknown id", recordGone, KindNotFound, "RecordNotFound"},
		{"not an id", "../../etc", KindNotFound, "RecordNotFound"},
		{"another environment's record", recordOther, KindNotFound, "RecordNotFound"},
		{"applied from a local folder", recordLocal, KindUnprocessable, "NoCommit"},
		{"a failed apply", recordFailed, KindUnprocessable, "NotApplied"},
		{"not an apply", recordPause, KindUnprocessable, "NotAnApply"},
		{"chain broken", recordBroken, KindConflict, "RecordTampered"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var rec audit.Record
			var err error
			if audit.ValidID(tt.id) {
				rec, err = recs.Get(t.Context(), tt.id)
			}
			got := EnvRollbackRecord("dev", tt.id, rec, err)
			var e *Error
			switch {
			case tt.reason == "" && got != nil:
				t.Fatalf("EnvRollbackRecord(%s) = %v, want nil", tt.id, got)
			case tt.reason != "" && (!errors.As(got, &e) || e.Kind != tt.kind || e.Reason != tt.reason):
				t.Fatalf("EnvRollbackRecord(%s) = %v, want kind %d reason %s", tt.id, got, tt.kind, tt.reason)
			case e != nil && !strings.HasSuffix(e.Public, "nothing was committed"):
				t.Errorf("public = %q, want it to say nothing was committed", e.Public)
			}
		})
	}
	if err := EnvRollbackRecord("dev", recordA, audit.Record{}, errors.New("apiserver down")); err == nil || err.(*Error).Kind != KindUpstream {
		t.Errorf("EnvRollbackRecord(read error) = %v, want KindUpstream", err)
	}
}

// restoreCommit is a repository at its head and at earlier commits: it
// runs a request's Plan, applies its Restores to the head tree, and runs
// its Check; what it would push is kept.
type restoreCommit struct {
	head   fstest.MapFS
	at     map[string]fstest.MapFS
	req    *writeback.Request
	pushed fstest.MapFS
}

func (m *restoreCommit) commit(ctx context.Context, req writeback.Request) (writeback.Result, error) {
	m.req = &req
	if req.Plan != nil {
		if _, err := req.Plan(m.head); err != nil {
			return writeback.Result{}, errors.New("plan refused")
		}
	}
	edited := maps.Clone(m.head)
	for _, r := range req.Restore {
		from, ok := m.at[r.Commit]
		if !ok {
			return writeback.Result{}, &writeback.RestoreError{Path: r.Path, Commit: r.Commit, Reason: "no such commit"}
		}
		for p := range edited {
			if strings.HasPrefix(p, r.Path+"/") || p == r.Path {
				delete(edited, p)
			}
		}
		for p, f := range from {
			if strings.HasPrefix(p, r.Path+"/") || p == r.Path {
				edited[p] = f
			}
		}
	}
	if maps.EqualFunc(edited, m.head, func(a, b *fstest.MapFile) bool { return string(a.Data) == string(b.Data) }) {
		return writeback.Result{SHA: "head", Branch: req.Branch, NoChange: true}, nil
	}
	if req.Check != nil {
		if err := req.Check(ctx, edited); err != nil {
			return writeback.Result{}, errors.New("check refused")
		}
	}
	m.pushed = edited
	branch := req.Branch
	if req.Mode == envconfig.ModeBranch {
		branch = "deploy-web/rollback-" + req.App + "-" + req.Version
	}
	return writeback.Result{SHA: "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4", Branch: branch, Message: req.Message}, nil
}

const envRollbackConfig = `
environments:
  - name: dev
    cluster: {context: test}
    namespace: apps
    source: {repo: "file:///nonexistent/m.git", ref: main, path: overlays/dev}
    catalog: catalogs/dev.json
    writeBack: {mode: push}
  - name: staging
    cluster: {context: test}
    namespace: staging
    source: {repo: "file:///nonexistent/m.git", ref: main, path: %s}
    catalog: catalogs/staging.json
    writeBack: {mode: push}
  - name: prod
    protected: true
    cluster: {context: test}
    namespace: prod
    source: {repo: "file:///nonexistent/m.git", ref: main, path: overlays/prod}
    catalog: catalogs/prod.json
    writeBack: {mode: branch}
  - name: plain
    cluster: {context: test}
    namespace: plain
    source: {repo: "file:///nonexistent/m.git", ref: main, path: overlays/plain}
    catalog: catalogs/plain.json
`

func configMap(name, v string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  v: \"" + v + "\"\n"
}

// envTrees: at commitA dev has cm at 1 and no extra; the head has cm at
// 2, an extra ConfigMap and a newer catalog, and staging's overlay
// changed since.
func envTrees() (head, a fstest.MapFS) {
	a = fstest.MapFS{
		"overlays/dev/kustomization.yaml":     {Data: []byte("resources: [cm.yaml]\n")},
		"overlays/dev/cm.yaml":                {Data: []byte(configMap("cm", "1"))},
		"catalogs/dev.json":                   {Data: []byte(`{"mode": "version", "services": []}` + "\n")},
		"overlays/staging/kustomization.yaml": {Data: []byte("resources: [cm.yaml]\n")},
		"overlays/staging/cm.yaml":            {Data: []byte(configMap("s", "1"))},
		"overlays/prod/kustomization.yaml":    {Data: []byte("resources: [cm.yaml]\n")},
		"overlays/prod/cm.yaml":               {Data: []byte(configMap("p", "1"))},
	}
	head = maps.Clone(a)
	head["overlays/dev/kustomization.yaml"] = &fstest.MapFile{Data: []byte("resources: [cm.yaml, extra.yaml]\n")}
	head["overlays/dev/cm.yaml"] = &fstest.MapFile{Data: []byte(configMap("cm", "2"))}
	head["overlays/dev/extra.yaml"] = &fstest.MapFile{Data: []byte(configMap("extra", "1"))}
	head["catalogs/dev.json"] = &fstest.MapFile{Data: []byte(`{"mode": "version", "services": [{"id": "x", "image": "reg.example/x", "tag": "1.0.0"}]}` + "\n")}
	head["overlays/staging/cm.yaml"] = &fstest.MapFile{Data: []byte(configMap("s", "2"))}
	head["overlays/prod/cm.yaml"] = &fstest.MapFile{Data: []byte(configMap("p", "2"))}
	return head, a
}

// frozenGate refuses every write.
type frozenGate struct{}

func (frozenGate) Check(context.Context, freeze.Action, freeze.Target, *freeze.BreakGlass) (*freeze.Override, error) {
	return nil, errors.New("frozen")
}

func TestEnvRollback(t *testing.T) {
	ada := Person{Actor: audit.Actor{Email: "ada@example.com", Subject: "ada"}}
	recs := envRecords()
	recs["0123456789abcdef-0000000007"] = applied("prod", commitA)
	for _, tt := range []struct {
		name, env, to string
		// stagingPath is staging's source path (dev's own folder: a
		// neighbour that reads it).
		stagingPath string
		frozen      bool
		// head is the tree the branch holds (default: envTrees' head).
		headIsA bool
		// want: the refusal's reason ("" none); run: a run started;
		// branch: the commit's branch.
		want, branch string
		run          bool
		noChange     bool
	}{
		{name: "dev back to record A", env: "dev", to: recordA, want: "", branch: "main", run: true},
		{name: "already at A", env: "dev", to: recordA, headIsA: true, noChange: true, branch: "main"},
		{name: "protected: a review branch, no run", env: "prod", to: "0123456789abcdef-0000000007", branch: "deploy-web/rollback-prod-0123456789abcdef-0000000007"},
		{name: "no writeBack", env: "plain", to: recordA, want: "NoWriteBack"},
		{name: "unknown record", env: "dev", to: recordGone, want: "RecordNotFound"},
		{name: "another environment's record", env: "dev", to: recordOther, want: "RecordNotFound"},
		{name: "a record without a commit", env: "dev", to: recordLocal, want: "NoCommit"},
		{name: "frozen", env: "dev", to: recordA, frozen: true, want: "frozen"},
		{name: "another environment reads the folder", env: "dev", to: recordA, stagingPath: "overlays/dev", want: "ReachesOtherEnvironments"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sp := cmpOr(tt.stagingPath, "overlays/staging")
			cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf(envRollbackConfig, sp)), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			env, _ := cfg.Env(tt.env)
			head, a := envTrees()
			if tt.headIsA {
				head = a
			}
			mc := &restoreCommit{head: head, at: map[string]fstest.MapFS{commitA: a}}
			var last envrun.DeployRequest
			log := &memAppend{}
			o := Options{Commit: mc.commit, Runs: memRunner{cfg: cfg, last: &last}, Records: recs, Audit: log}
			if tt.frozen {
				o.Freezes = frozenGate{}
			}
			res, err := New(o).EnvRollback(t.Context(), EnvRollbackRequest{Env: env, Cluster: "c1", To: tt.to, Reason: "bad deploy", Who: ada})
			if tt.want != "" {
				var e *Error
				if err == nil || (!errors.As(err, &e) || e.Reason != tt.want) && err.Error() != tt.want {
					t.Fatalf("EnvRollback = %+v, %v; want refusal %s", res, err, tt.want)
				}
				if mc.pushed != nil || last.Trigger != "" {
					t.Errorf("refused, yet pushed %v / started %+v", mc.pushed != nil, last)
				}
				if tt.want == "frozen" && mc.req != nil {
					t.Errorf("frozen, yet the repository was asked to commit")
				}
				if len(log.recs) != 1 || log.recs[0].Outcome == audit.OutcomeSucceeded {
					t.Errorf("records = %+v, want one refused or failed rollback", log.recs)
				}
				return
			}
			if err != nil {
				t.Fatalf("EnvRollback = %v", err)
			}
			if res.NoChange != tt.noChange || res.Commit == nil || res.Commit.Branch != tt.branch || (res.Run != nil) != tt.run {
				t.Fatalf("EnvRollback = %+v (commit %+v), want noChange %v on %s, run %v", res, res.Commit, tt.noChange, tt.branch, tt.run)
			}
			if tt.noChange {
				if len(log.recs) != 0 || last.Trigger != "" {
					t.Errorf("no change, yet records %+v and run %+v", log.recs, last)
				}
				return
			}
			// The commit: dev's folder and catalog as at A, nothing else
			// of the head changed (staging keeps its newer cm).
			want := maps.Clone(head)
			for _, p := range res.Paths {
				for q := range want {
					if q == p || strings.HasPrefix(q, p+"/") {
						delete(want, q)
					}
				}
				for q, f := range a {
					if q == p || strings.HasPrefix(q, p+"/") {
						want[q] = f
					}
				}
			}
			if !maps.EqualFunc(mc.pushed, want, func(x, y *fstest.MapFile) bool { return string(x.Data) == string(y.Data) }) {
				t.Errorf("pushed tree = %v, want %v", slices.Sorted(maps.Keys(mc.pushed)), slices.Sorted(maps.Keys(want)))
			}
			if tt.env == "dev" && !slices.Equal(res.Paths, []string{"overlays/dev", "catalogs/dev.json"}) {
				t.Errorf("paths = %v, want dev's folder and its catalog", res.Paths)
			}
			msg := mc.req.Message + strings.Join(mc.req.Detail(), "\n")
			for _, w := range []string{"rollback " + tt.env, tt.to, "ada@example.com", "bad deploy", commitA} {
				if !strings.Contains(msg, w) {
					t.Errorf("commit message %q lacks %q", msg, w)
				}
			}
			if tt.run && (last.Trigger != envrun.TriggerRollback || last.Commit != res.Commit.SHA || last.Only != "") {
				t.Errorf("run = %+v, want a rollback run of the whole environment at %s", last, res.Commit.SHA)
			}
			if len(log.recs) != 1 || log.recs[0].Verb != audit.VerbRollback || log.recs[0].Commit != res.Commit.SHA || !strings.Contains(log.recs[0].Message, tt.to) {
				t.Errorf("records = %+v, want one rollback record naming the commit and %s", log.recs, tt.to)
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
