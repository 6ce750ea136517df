package devcluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki holds the paths of the generated keys and the admin token.
type pki struct {
	saKey, saPub      string
	tokens, token     string
	kwokCert, kwokKey string
}

// writePKI writes the service-account signing key pair, the static token file
// of the admin user, and KWOK's serving certificate into dir.
func writePKI(dir string) (pki, error) {
	p := pki{
		saKey:    filepath.Join(dir, "sa.key"),
		saPub:    filepath.Join(dir, "sa.pub"),
		tokens:   filepath.Join(dir, "tokens.csv"),
		token:    randomHex(24),
		kwokCert: filepath.Join(dir, "kwok.crt"),
		kwokKey:  filepath.Join(dir, "kwok.key"),
	}
	sa, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return p, fmt.Errorf("devcluster: service-account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return p, fmt.Errorf("devcluster: service-account key: %w", err)
	}
	if err := writePEM(p.saKey, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(sa)); err != nil {
		return p, err
	}
	if err := writePEM(p.saPub, "PUBLIC KEY", pub); err != nil {
		return p, err
	}
	if err := os.WriteFile(p.tokens, []byte(p.token+",admin,admin,system:masters\n"), 0o600); err != nil {
		return p, fmt.Errorf("devcluster: token file: %w", err)
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return p, fmt.Errorf("devcluster: kwok key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "kwok"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost", NodeName},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return p, fmt.Errorf("devcluster: kwok certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return p, fmt.Errorf("devcluster: kwok key: %w", err)
	}
	if err := writePEM(p.kwokCert, "CERTIFICATE", der); err != nil {
		return p, err
	}
	if err := writePEM(p.kwokKey, "EC PRIVATE KEY", keyDER); err != nil {
		return p, err
	}
	return p, nil
}

func writePEM(path, typ string, der []byte) error {
	b := pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("devcluster: write %s: %w", filepath.Base(path), err)
	}
	return nil
}
