package deployplan

import (
	"fmt"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// Markdown renders the report as CommonMark (tables are GFM), for the console.
func (r *Report) Markdown() string {
	d := &r.DeployApply
	d.normalize()
	var b strings.Builder
	fmt.Fprintf(&b, "# Deploy %s: %s\n\n", md(d.Environment), md(d.Mode))
	fmt.Fprintf(&b, "**%s**: %s\n\n", strings.ToUpper(d.Conclusion.Status), md(d.Conclusion.Summary))
	fmt.Fprintf(&b, "- Target: namespace `%s` on `%s`", d.Target.Namespace, mdCode(d.Target.Cluster))
	if d.Target.Protected {
		b.WriteString(" (protected: apply is always refused)")
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "- Source: `%s` at `%s`\n", mdCode(d.Source.Origin), mdCode(d.Source.Commit))
	fmt.Fprintf(&b, "- Generated: %s\n\n", d.GeneratedAt.UTC().Format(time.RFC3339))

	if len(d.RemainingBlockers) > 0 {
		b.WriteString("## Blockers\n\n| id | problem | how to unblock |\n| --- | --- | --- |\n")
		for _, bl := range d.RemainingBlockers {
			msg := bl.Message
			if len(bl.Affected) > 1 {
				msg += fmt.Sprintf(" (affected, %d: %s)", len(bl.Affected), affectedList(bl.Affected, 20))
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", mdCodeCell(bl.ID), mdCell(msg), mdCell(bl.UnblockHint))
		}
		b.WriteString("\n")
	}
	a := d.ArtifactPlan
	b.WriteString("## Artifacts\n\n| commit | value |\n| --- | --- |\n")
	for _, kv := range [][2]string{{"expected artifact", a.ExpectedArtifactCommit}, {"source", a.SourceCommit}, {"deploy (image tags)", a.DeployCommit}, {"catalog", a.CatalogCommit}} {
		fmt.Fprintf(&b, "| %s | %s |\n", kv[0], mdCodeCell(kv[1]))
	}
	if a.CatalogMode != "" {
		fmt.Fprintf(&b, "\nCatalog mode: **%s**.", md(a.CatalogMode))
	}
	fmt.Fprintf(&b, "\nPublish status: **%s**; registry: **%s**.", md(a.PublishStatus), md(a.RegistryStatus))
	if len(a.UnpublishedServices) > 0 {
		fmt.Fprintf(&b, " Unpublished: %s.", md(strings.Join(a.UnpublishedServices, ", ")))
	}
	b.WriteString("\n\n")
	if len(a.Services) > 0 {
		b.WriteString("| service | image | digest | published | registry |\n| --- | --- | --- | --- | --- |\n")
		for _, s := range a.Services {
			id := s.ID
			if s.ThirdParty {
				id += " (third party)"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %t | %s |\n", mdCell(id), mdCodeCell(s.Image), mdCodeCell(textfmt.ShortDigest(s.Digest)), s.Published, mdCell(s.Registry))
		}
		b.WriteString("\n")
	}
	if len(d.Source.Charts) > 0 {
		b.WriteString("## Helm charts\n\n| chart | version | release | values files | Kubernetes | objects |\n| --- | --- | --- | --- | --- | --- |\n")
		for _, c := range d.Source.Charts {
			fmt.Fprintf(&b, "| %s (%s, via %s) | %s | %s | %s | %s | %d |\n", mdCodeCell(c.Path), mdCell(c.Name), mdCell(c.Via), mdCodeCell(c.Version), mdCodeCell(c.Release),
				textfmt.OrDash(mdCodeList(c.ValuesFiles)), mdCodeCell(c.KubeVersion), c.Objects)
		}
		b.WriteString("\n")
	}
	if len(d.WorkloadPlan) > 0 {
		b.WriteString("## Workloads\n\n| kind | name | containers | replicas | action |\n| --- | --- | --- | --- | --- |\n")
		for _, w := range d.WorkloadPlan {
			var cs []string
			for _, c := range w.Containers {
				cs = append(cs, fmt.Sprintf("%s: `%s`", mdCell(c.Name), mdCode(c.Image)))
			}
			rep := "-"
			if w.Replicas != nil {
				rep = fmt.Sprint(*w.Replicas)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdCell(w.Kind), mdCell(w.Name), strings.Join(cs, "<br>"), rep, mdCell(w.Action))
		}
		b.WriteString("\n")
	}
	if len(d.ServicePlan) > 0 {
		b.WriteString("## Services\n\n| name | service id | ports |\n| --- | --- | --- |\n")
		for _, s := range d.ServicePlan {
			var ps []string
			for _, p := range s.Ports {
				ps = append(ps, fmt.Sprintf("%d->%s/%s", p.Port, p.TargetPort, p.Protocol))
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", mdCell(s.Name), mdCell(textfmt.OrDash(s.ServiceID)), mdCell(strings.Join(ps, ", ")))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Template Jobs\n\n")
	fmt.Fprintf(&b, "Allowlist in `%s`: %s.\n\n", d.TemplateJobReplacementPolicy.Namespace, md(textfmt.OrDash(strings.Join(d.TemplateJobReplacementPolicy.Allowlist, ", "))))
	if len(d.TemplateJobReplacements) > 0 {
		b.WriteString("| job | old image | new image | result | reason |\n| --- | --- | --- | --- | --- |\n")
		for _, j := range d.TemplateJobReplacements {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdCell(j.Job), mdCodeCell(j.OldImage), mdCodeCell(j.NewImage), mdCell(j.Result), mdCell(j.Reason))
		}
		b.WriteString("\n")
	}
	if len(d.Waves) > 0 {
		b.WriteString("## Waves\n\nEach wave starts once the workloads of the waves before it are healthy, and the waves of an App once the Apps it depends on are.\n\n| wave | objects, in write order | waits for | result |\n| --- | --- | --- | --- |\n")
		for _, w := range d.Waves {
			res := textfmt.OrDash(w.Result)
			if w.Message != "" {
				res += ": " + w.Message
			}
			name := waveName(w)
			if len(w.WaitsFor) > 0 {
				name += ", once " + strings.Join(w.WaitsFor, ", ") + " healthy"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdCell(name), mdCell(strings.Join(w.Objects, ", ")), mdCell(textfmt.OrDash(strings.Join(w.Workloads, ", "))), mdCell(res))
		}
		b.WriteString("\n")
	}
	if len(d.Objects) > 0 {
		b.WriteString("## Objects\n\n| kind | name | action | result | message |\n| --- | --- | --- | --- | --- |\n")
		for _, o := range d.Objects {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdCell(o.Kind), mdCell(o.Name), mdCell(o.Action), mdCell(textfmt.OrDash(o.Result)), mdCell(o.Message))
		}
		b.WriteString("\n")
	}
	if changeLines(d.Objects, 0) != nil {
		b.WriteString("## Changes\n\nWhat the apply changes, field by field (Secrets by hash only):\n\n| object | field | live | after the apply |\n| --- | --- | --- | --- |\n")
		for _, o := range d.Objects {
			for _, c := range o.Changes {
				fmt.Fprintf(&b, "| %s/%s | %s | %s | %s |\n", mdCell(o.Kind), mdCell(o.Name), mdCodeCell(c.Path), mdCodeCell(textfmt.OrDash(c.Old)), mdCodeCell(textfmt.OrDash(c.New)))
			}
			if o.ChangesOmitted > 0 {
				fmt.Fprintf(&b, "| %s/%s | %d more | – | – |\n", mdCell(o.Kind), mdCell(o.Name), o.ChangesOmitted)
			}
		}
		b.WriteString("\n")
	}
	if driftLines(d.Objects) != nil {
		b.WriteString("## Changed outside deploy-web\n\nLive fields set by another manager than deploy-web (kubectl edit, scale, set, annotate, another tool):\n\n| object | field | live value | manager | operation | time |\n| --- | --- | --- | --- | --- | --- |\n")
		for _, o := range d.Objects {
			for _, f := range o.Drift {
				when := "–"
				if f.Time != nil {
					when = f.Time.UTC().Format(time.RFC3339)
				}
				fmt.Fprintf(&b, "| %s/%s | %s | %s | %s | %s | %s |\n", mdCell(o.Kind), mdCell(o.Name), mdCodeCell(f.Path), mdCodeCell(f.Live), mdCell(f.Manager), mdCell(f.Operation), when)
			}
		}
		b.WriteString("\n")
	}
	if len(d.Orphans) > 0 {
		b.WriteString("## Orphans\n\nApplied by deploy-web earlier, no longer rendered.\n\n| kind | name | result | hint |\n| --- | --- | --- | --- |\n")
		for _, o := range d.Orphans {
			res := textfmt.OrDash(o.Result)
			if o.Message != "" {
				res += ": " + o.Message
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdCell(o.Kind), mdCell(o.Name), mdCell(res), mdCell(o.Hint))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "## Health\n\nNamespace now: **%s** %s\n\n", md(textfmt.OrDash(d.CurrentHealth.Status)), md(d.CurrentHealth.Message))
	if len(d.HealthChecks) > 0 {
		b.WriteString("| check | required | ok | message |\n| --- | --- | --- | --- |\n")
		for _, h := range d.HealthChecks {
			fmt.Fprintf(&b, "| %s | %t | %t | %s |\n", mdCell(h.Name), h.Required, h.OK, mdCell(h.Message))
		}
		b.WriteString("\n")
	}
	bd := d.ApplyBoundary
	b.WriteString("## Boundary\n\n")
	fmt.Fprintf(&b, "- Default mode: %s; apply needs %s\n", md(bd.DefaultMode), mdCodeList(bd.RequiredApplyFlags))
	fmt.Fprintf(&b, "- Writes: namespace `%s`, kinds %s\n", bd.WriteScope.Namespace, md(strings.Join(bd.WriteScope.Kinds, ", ")))
	fmt.Fprintf(&b, "- Never writes: %s\n", md(strings.Join(bd.NoWriteScope, "; ")))
	fmt.Fprintf(&b, "- Forbidden: %s\n\n", md(strings.Join(bd.ForbiddenActions, "; ")))
	rb := d.RollbackHint
	b.WriteString("## Rollback\n\n")
	fmt.Fprintf(&b, "- Pre-apply capture: `%s`\n", mdCode(textfmt.OrDash(rb.PreApplyCapture)))
	for _, group := range []struct {
		title string
		cmds  []string
	}{{"Deployment rollbacks", rb.DeploymentRollbacks}, {"Suspended Job cleanup", rb.SuspendedJobCleanup}, {"After rollback, check", rb.PostRollbackHealthChecks}} {
		if len(group.cmds) == 0 {
			continue
		}
		fmt.Fprintf(&b, "- %s:\n", group.title)
		for _, c := range group.cmds {
			fmt.Fprintf(&b, "  - `%s`\n", mdCode(c))
		}
	}
	if len(d.ManualCommands) > 0 {
		b.WriteString("\n## Commands\n\n```sh\n")
		for _, c := range d.ManualCommands {
			b.WriteString(strings.ReplaceAll(c, "```", "'''") + "\n")
		}
		b.WriteString("```\n")
	}
	if len(d.Warnings) > 0 {
		b.WriteString("\n## Warnings\n\n")
		for _, w := range d.Warnings {
			fmt.Fprintf(&b, "- %s\n", md(w))
		}
	}
	return b.String()
}

// md escapes text for Markdown inline content (no raw HTML survives).
func md(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`, "|", `\|`, "\n", " ")
	return r.Replace(s)
}

func mdCell(s string) string { return textfmt.OrDash(md(s)) }

// mdCodeCell is s as a code span in a table cell, or the en dash when s
// is empty: a table has no empty cells.
func mdCodeCell(s string) string {
	if s == "" {
		return textfmt.OrDash("")
	}
	return "`" + mdCode(s) + "`"
}

// mdCode makes s safe inside a single-backtick code span in a table cell.
func mdCode(s string) string {
	return strings.NewReplacer("`", "'", "|", `\|`, "\n", " ").Replace(s)
}

func mdCodeList(ss []string) string {
	var out []string
	for _, s := range ss {
		out = append(out, "`"+mdCode(s)+"`")
	}
	return strings.Join(out, " ")
}

// MarkdownText escapes s for Markdown inline content as the reports do (no
// raw HTML, emphasis, link or table syntax survives), for other packages'
// Markdown (revdiff's pull request comment).
func MarkdownText(s string) string { return md(s) }
