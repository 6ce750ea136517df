package auth

// IsAdmin is the one predicate that decides who is a superadmin: it reports
// whether claims (ID-token claims) carry value in the claim named claim.
//
// The claim may be a string (equal to value), a list of strings (containing
// value) or a bool (true matches value "true"; false never matches). Anything
// else, a missing claim, an empty claim name or an empty value is not admin.
// Comparison is exact and case-sensitive.
//
// When claim is "email", the claim "email_verified" must also be the
// boolean true: an IdP that lets users set an unverified address must not
// make one a superadmin.
func IsAdmin(claims map[string]any, claim, value string) bool {
	if claim == "" || value == "" {
		return false
	}
	if claim == "email" {
		if v, _ := claims["email_verified"].(bool); !v {
			return false
		}
	}
	switch v := claims[claim].(type) {
	case string:
		return v == value
	case bool:
		return v && value == "true"
	case []string:
		for _, s := range v {
			if s == value {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok && s == value {
				return true
			}
		}
	}
	return false
}
