package writeback

import "github.com/hanzoai/deploy-web/envconfig"

// EnvLimits maps environment e's limits onto a write-back's: the
// source timeout bounds the whole commit, maxRepoBytes the fetched pack.
func EnvLimits(e *envconfig.Environment) Limits {
	return Limits{Timeout: e.Limits.SourceTimeoutOrDefault(), MaxPackBytes: e.Limits.MaxRepoBytesOrDefault()}
}

// EnvToken reads environment e's write-back token (writeBack.credentials), a
// relative tokenFile being resolved against the config file's folder. It
// is empty without credentials.
func EnvToken(e *envconfig.Environment) (Token, error) {
	if e.WriteBack == nil {
		return Token{}, nil
	}
	c := e.WriteBack.Credentials
	if c.TokenFile != "" {
		c.TokenFile = e.Resolve(c.TokenFile)
	}
	return ReadToken(c)
}
