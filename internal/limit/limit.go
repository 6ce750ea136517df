// Package limit holds the one rule every bound of a configuration follows:
// a value above zero is the bound, zero or less (unset) is the default.
package limit

// Number is what a bound is counted in (time.Duration is an ~int64).
type Number interface {
	~int | ~int64
}

// Or returns v when it is above zero, else def.
func Or[T Number](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}
