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
	"bytes"
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The credentials are written once, secrets readable by their owner only,
// and read back across restarts; a client that trusts the certificate and
// sends the token is served over TLS, as kube-proxy is.
func TestLoadClientCredentials(t *testing.T) {
	dir := ClientCredentialsDir(t.TempDir())
	first, err := LoadClientCredentials(dir, ServingHosts("127.0.0.1:51006"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{"": 0o700, clientTokenFile: 0o600, servingKeyFile: 0o600, servingCertFile: 0o644} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil || info.Mode().Perm() != want {
			t.Errorf("%q: %v, %v; want mode %v", name, info.Mode(), err, want)
		}
	}
	cert, err := os.ReadFile(ServingCertFile(dir))
	if err != nil {
		t.Fatal(err)
	}
	again, err := LoadClientCredentials(dir, ServingHosts("127.0.0.1:51006"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.authorization, first.authorization) || !bytes.Equal(again.certificate.Certificate[0], first.certificate.Certificate[0]) {
		t.Error("a restart wrote new credentials: kube-proxy's would no longer match")
	}

	server := httptest.NewUnstartedServer(again.Require(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "the view")
	})))
	server.TLS = again.TLSConfig()
	server.StartTLS()
	defer server.Close()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	token, err := os.ReadFile(ClientTokenFile(dir))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, server.URL+"/api/v1/services", nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("a client trusting tls.crt: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "the view" {
		t.Errorf("with the token: %s %q", resp.Status, body)
	}
}

// A certificate that does not name the address the wrapper now binds, that
// is not valid yet (written while the clock was ahead) or that nears its end
// is replaced; the token stays.
func TestCertificatesAreReplacedWhenUnfit(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name     string
		issued   time.Time
		listen   string
		replaced bool
	}{
		{name: "fit", issued: now, listen: "127.0.0.1:51006"},
		{name: "issued a year ago", issued: now.Add(-365 * 24 * time.Hour), listen: "127.0.0.1:51006"},
		{name: "another address", issued: now, listen: "192.0.2.7:51006", replaced: true},
		{name: "issued while the clock was two days ahead", issued: now.Add(48 * time.Hour), listen: "127.0.0.1:51006", replaced: true},
		{name: "within a year of its end", issued: now.Add(-servingCertValidity + 300*24*time.Hour), listen: "127.0.0.1:51006", replaced: true},
		{name: "expired", issued: now.Add(-servingCertValidity - time.Hour), listen: "127.0.0.1:51006", replaced: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			first, err := LoadClientCredentials(dir, ServingHosts("127.0.0.1:51006"))
			if err != nil {
				t.Fatal(err)
			}
			cert, key, err := selfSignedCertificate(ServingHosts("127.0.0.1:51006"), tc.issued)
			if err != nil {
				t.Fatal(err)
			}
			if err := writeCertificate(dir, cert, key); err != nil {
				t.Fatal(err)
			}
			planted, err := tls.X509KeyPair(cert, key)
			if err != nil {
				t.Fatal(err)
			}
			again, err := LoadClientCredentials(dir, ServingHosts(tc.listen))
			if err != nil {
				t.Fatal(err)
			}
			if replaced := !bytes.Equal(again.certificate.Certificate[0], planted.Certificate[0]); replaced != tc.replaced {
				t.Errorf("replaced: %t, want %t", replaced, tc.replaced)
			}
			host, _, _ := net.SplitHostPort(tc.listen)
			if !servable(again.certificate.Leaf, []string{host}, now) {
				t.Errorf("the certificate served does not serve %s now: %v to %v", host, again.certificate.Leaf.NotBefore, again.certificate.Leaf.NotAfter)
			}
			if !bytes.Equal(again.authorization, first.authorization) {
				t.Error("the token changed with the certificate")
			}
		})
	}
}

// Credentials anyone but their owner could have read or chosen are refused,
// with the path and the reason.
func TestUnsafeClientCredentialsAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		set    func(t *testing.T, dir string)
		saying string
	}{
		{name: "a short token", saying: "characters", set: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, clientTokenFile), "short\n", 0o600)
		}},
		{name: "a token others read", saying: "only its owner reads", set: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, clientTokenFile), strings.Repeat("x", 43), 0o644)
		}},
		{name: "a token that is a link", saying: "too many levels of symbolic links", set: func(t *testing.T, dir string) {
			target := filepath.Join(t.TempDir(), "elsewhere")
			write(t, target, strings.Repeat("x", 43), 0o600)
			if err := os.Symlink(target, filepath.Join(dir, clientTokenFile)); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a key others read", saying: "only its owner reads", set: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, servingKeyFile), "not even a key", 0o644)
		}},
		{name: "a key that is a link", saying: "too many levels of symbolic links", set: func(t *testing.T, dir string) {
			if err := os.Symlink("/etc/hostname", filepath.Join(dir, servingKeyFile)); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a directory others write", saying: "others may write it", set: func(t *testing.T, dir string) {
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "client")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			tc.set(t, dir)
			_, err := LoadClientCredentials(dir, ServingHosts("127.0.0.1:51006"))
			if err == nil || !strings.Contains(err.Error(), tc.saying) {
				t.Errorf("got %v, want an error saying %q", err, tc.saying)
			}
		})
	}
	// A directory of another user: as root, one given away; otherwise one
	// of root's.
	dir := "/"
	if os.Geteuid() == 0 {
		dir = t.TempDir()
		if err := os.Chown(dir, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := LoadClientCredentials(dir, ServingHosts("127.0.0.1:51006")); err == nil || !strings.Contains(err.Error(), "not to the wrapper's user") {
		t.Errorf("a directory of another user: %v, want a refusal", err)
	}
}

func write(t *testing.T, path, content string, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
}

// Only kube-proxy's token reaches the view and the rest of the API; probes
// and metrics need none.
func TestRequireClientToken(t *testing.T) {
	credentials, err := LoadClientCredentials(t.TempDir(), ServingHosts("127.0.0.1:51006"))
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimPrefix(string(credentials.authorization), "Bearer ")
	handler := credentials.Require(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	for _, tc := range []struct {
		name, method, path, authorization string
		want                              int
	}{
		{name: "kube-proxy", path: "/api/v1/services", authorization: "Bearer " + token, want: http.StatusTeapot},
		{name: "no token", path: "/api/v1/services", want: http.StatusUnauthorized},
		{name: "another token", path: "/apis/discovery.k8s.io/v1/endpointslices", authorization: "Bearer " + token[1:] + "x", want: http.StatusUnauthorized},
		{name: "the token, not as bearer", path: "/api/v1/services", authorization: token, want: http.StatusUnauthorized},
		{name: "an Event", method: http.MethodPost, path: "/apis/events.k8s.io/v1/namespaces/default/events", want: http.StatusUnauthorized},
		{name: "kube-proxy's Event", method: http.MethodPost, path: "/apis/events.k8s.io/v1/namespaces/default/events", authorization: "Bearer " + token, want: http.StatusTeapot},
		{name: "a watch", path: "/apis/discovery.k8s.io/v1/endpointslices?watch=true", want: http.StatusUnauthorized},
		{name: "a probe's path with a trailing slash", path: "/readyz/", want: http.StatusUnauthorized},
		{name: "readiness probe", path: "/readyz", want: http.StatusTeapot},
		{name: "liveness probe", path: "/healthz", want: http.StatusTeapot},
		{name: "metrics", path: "/metrics", want: http.StatusTeapot},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(cmp.Or(tc.method, http.MethodGet), tc.path, nil)
			if tc.authorization != "" {
				req.Header.Set("Authorization", tc.authorization)
			}
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Errorf("%s: %d %s, want %d", tc.path, rec.Code, rec.Body, tc.want)
			}
		})
	}
}
