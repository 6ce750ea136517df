package devidp

import (
	"fmt"
	"slices"
	"sync"
)

// directory is the app's user list, which tests (and the demo) may change
// while the IdP runs: a user's groups, or disabling a user.
type directory struct {
	mu    sync.RWMutex
	users []User
}

func newDirectory(users []User) *directory {
	return &directory{users: cloneUsers(users)}
}

// snapshot returns a copy of the users.
func (d *directory) snapshot() []User {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return cloneUsers(d.users)
}

// update applies f to the named user.
func (d *directory) update(name string, f func(*User)) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	i := slices.IndexFunc(d.users, func(u User) bool { return u.Username == name })
	if i < 0 {
		return fmt.Errorf("devidp: no user %q", name)
	}
	f(&d.users[i])
	return nil
}

func cloneUsers(users []User) []User {
	out := slices.Clone(users)
	for i := range out {
		out[i].Groups = slices.Clone(out[i].Groups)
	}
	return out
}

// SetGroups replaces the groups of the named user. ID tokens issued from
// now on, refreshed ones included, carry the new groups.
func (p *IdP) SetGroups(username string, groups []string) error {
	return p.dir.update(username, func(u *User) { u.Groups = slices.Clone(groups) })
}

// Disable disables the named user: the sign-in form refuses them and every
// refresh of their tokens is refused (access_denied), as an IdP does for a
// deactivated account.
func (p *IdP) Disable(username string) error {
	return p.dir.update(username, func(u *User) { u.Disabled = true })
}
