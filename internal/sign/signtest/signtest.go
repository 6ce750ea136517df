// Package signtest gives tests a fixed signing key. Only tests import it.
package signtest

import "github.com/hanzoai/deploy-web/internal/sign"

// Secret is the test key's bytes.
const Secret = "signtest: a fixed key for tests, 32 bytes or more"

// Keys returns sign.Keys of the fixed test key.
func Keys() sign.Keys {
	k, err := sign.NewKey([]byte(Secret))
	if err != nil {
		panic(err)
	}
	return sign.Static{Key: k}
}
