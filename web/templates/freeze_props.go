package templates

// FreezeRow is one freeze as the /freezes page and the banners show it.
type FreezeRow struct {
	ID string
	// Scope is what it freezes ("env=prod app=web-*").
	Scope  string
	Reason string
	// Ticket is an http(s) link (freeze validates it), "" for none.
	Ticket string
	Author string
	// Start and End bound the freeze (a recurring one's series).
	Start, End string
	// Recurring is the rule and each occurrence's length ("" one-off).
	Recurring string
	// Window is the current (active) or next (upcoming) frozen span, or
	// the last one (past).
	Window string
	// Until is when the target opens (active) or the window starts
	// (upcoming), in UTC.
	Until string
}

// FreezesProps is the /freezes page.
type FreezesProps struct {
	Layout LayoutProps
	// Configured is false when deploy-web runs without a freezes store.
	Configured bool
	// Unreadable says why the freezes could not be read ("" when read).
	Unreadable string
	Now        string
	Active     []FreezeRow
	Upcoming   []FreezeRow
	Past       []FreezeRow
	// CanFreeze draws the create form and the end-now buttons (the
	// decision of their routes, roles.Freeze).
	CanFreeze bool
	Form      FreezeFormProps
}

// FreezeFormProps is the create form, with what was typed and the refusal
// of the last attempt.
type FreezeFormProps struct {
	Error                                    string
	Environments, Clusters, Namespaces, Apps string
	Start, End, Zone, RRule, Duration        string
	Reason, Ticket                           string
}

// FreezeBannerProps is the freeze state of one page's target: the freeze
// that holds it now (Active, nil when open) and the ones starting within
// a day (Upcoming).
type FreezeBannerProps struct {
	Active   *FreezeRow
	Upcoming []FreezeRow
	// Unreadable says the freezes could not be read (writes are refused).
	Unreadable bool
	// Tampered, with Unreadable, is why: the freezes were changed outside
	// deploy-web (cmstore.TamperedError's public text, the fix included).
	Tampered string
}

// Frozen reports whether the banner's target is frozen now (or may be:
// the freezes could not be read).
func (p FreezeBannerProps) Frozen() bool { return p.Active != nil || p.Unreadable }

// BreakGlassProps is the break-glass field of a confirm dialog on a
// frozen target.
type BreakGlassProps struct {
	// Frozen draws the field (the target is frozen now).
	Frozen bool
	// Allowed is the person's roles.BreakGlass decision there; without
	// it the dialog says why the write is refused.
	Allowed bool
	// Message is the freeze's refusal text.
	Message string
}
