/*
Copyright 2026 The gridview Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package wrapper

import (
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// kube-proxy reaches the wrapper over TLS on loopback, trusting the
// wrapper's self-signed certificate, and presents a bearer token: client-go
// sends a kubeconfig's credentials over TLS only, and TLS also keeps the
// token and the view from a local process that binds the port while the
// wrapper restarts. Both live in one directory that kube-proxy's Pod mounts
// read-only and its kubeconfig names.
const (
	clientTokenFile = "token"
	servingCertFile = "tls.crt"
	servingKeyFile  = "tls.key"

	// minClientTokenLen bounds a token written by hand from below: the one
	// the wrapper writes has 43 characters, 256 random bits.
	minClientTokenLen = 32
)

// ClientCredentialsDir is where the wrapper keeps kube-proxy's credentials
// unless --client-credentials-dir says otherwise.
func ClientCredentialsDir(cacheDir string) string { return filepath.Join(cacheDir, "client") }

// ClientTokenFile is the tokenFile of kube-proxy's kubeconfig.
func ClientTokenFile(dir string) string { return filepath.Join(dir, clientTokenFile) }

// ClientCredentials are the wrapper's side of kube-proxy's credentials.
type ClientCredentials struct {
	authorization []byte
	certificate   tls.Certificate
}

// LoadClientCredentials reads the token and the serving certificate from
// dir, or writes new ones when there are none, when the certificate does not
// name every one of hosts, is not valid now, or nears its end. Both stay across
// restarts: kube-proxy reads them from its kubeconfig. Deleting the token
// and restarting the wrapper rotates it.
func LoadClientCredentials(dir string, hosts []string) (*ClientCredentials, error) {
	if err := privateDir(dir); err != nil {
		return nil, err
	}
	token, err := loadOrCreateToken(dir)
	if err != nil {
		return nil, err
	}
	removeStaleTemporaries(dir, clientTokenFile, servingKeyFile, servingCertFile)
	certificate, err := loadOrCreateCertificate(dir, hosts, time.Now())
	if err != nil {
		return nil, err
	}
	return &ClientCredentials{authorization: []byte("Bearer " + token), certificate: certificate}, nil
}

// TLSConfig serves the wrapper's certificate.
func (c *ClientCredentials) TLSConfig() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{c.certificate}, MinVersion: tls.VersionTLS12}
}

// Require serves next only to requests that carry the token, kube-proxy's:
// any other process on the node reaches the wrapper's loopback port too, and
// would read the node's whole view (every Service's endpoints) and spend
// kube-proxy's Event budget. Probes and metrics, which say nothing about the
// cluster, need none.
func (c *ClientCredentials) Require(next http.Handler) http.Handler {
	codecs := serializer.NewCodecFactory(wrapperScheme)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.URL.Path {
		case "/healthz", "/livez", "/readyz", "/metrics":
			next.ServeHTTP(w, req)
			return
		}
		if subtle.ConstantTimeCompare([]byte(req.Header.Get("Authorization")), c.authorization) != 1 {
			writeError(codecs, w, req, apierrors.NewUnauthorized(
				"gridview-wrapper serves kube-proxy only: send the bearer token of <client-credentials-dir>/token, the tokenFile of kube-proxy's kubeconfig"))
			return
		}
		next.ServeHTTP(w, req)
	})
}

// privateDir makes dir, or checks the one there: a directory, not a link,
// that no one but the wrapper's user may write, since whoever writes it
// chooses kube-proxy's token and the certificate it trusts.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	info, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if mode := info.Mode().Perm(); mode&0o022 != 0 {
		return fmt.Errorf("%s has mode %v: others may write it; want 0700 or 0755", dir, mode)
	}
	if stat, ok := info.Sys().(*syscall.Stat_t); ok && int(stat.Uid) != os.Geteuid() {
		return fmt.Errorf("%s belongs to uid %d, not to the wrapper's user (uid %d)", dir, stat.Uid, os.Geteuid())
	}
	return nil
}

// readPrivate reads a file of dir that only its owner may read, without
// following a link.
func readPrivate(dir, name string) ([]byte, error) {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() || info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s has mode %v: want a file only its owner reads (0600)", f.Name(), info.Mode())
	}
	return io.ReadAll(io.LimitReader(f, 64<<10))
}

func loadOrCreateToken(dir string) (string, error) {
	data, err := readPrivate(dir, clientTokenFile)
	switch {
	case err == nil:
		token := strings.TrimSpace(string(data))
		if len(token) < minClientTokenLen {
			return "", fmt.Errorf("%s holds a token of %d characters, want %d at least: delete it, and the wrapper writes a new one",
				ClientTokenFile(dir), len(token), minClientTokenLen)
		}
		return token, nil
	case !errors.Is(err, os.ErrNotExist):
		return "", err
	}
	random := make([]byte, 32)
	if _, err := rand.Read(random); err != nil {
		return "", err
	}
	token := base64.RawURLEncoding.EncodeToString(random)
	err = replaceFile(dir, clientTokenFile, 0o600, func(f *os.File) error {
		_, err := f.WriteString(token + "\n")
		return err
	})
	return token, err
}
