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

package localcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
)

// Start-up deadlines: generous for a loaded 2-core machine running two
// control planes at once.
const (
	etcdStartTimeout      = 60 * time.Second
	apiServerStartTimeout = 2 * time.Minute
	pollInterval          = 250 * time.Millisecond
	startAttempts         = 3 // a free port may be taken before the server binds it
)

// startEtcd runs kube-apiserver's etcd on free loopback ports and waits
// until it is healthy.
func (c *Cluster) startEtcd(ctx context.Context) error {
	return retryOnPortClash(func() (*Process, error) {
		e, err := newEtcdInstance("etcd", "localcluster", "127.0.0.1", filepath.Join(c.opts.WorkDir, "etcd"))
		if err != nil {
			return nil, err
		}
		c.EtcdURL = e.clientURL
		return c.runEtcd(ctx, e, func(p *Process) { c.etcd = p })
	})
}

// etcdInstance is what it takes to start an etcd again on the same ports
// and data: a restart, as opposed to a new member.
type etcdInstance struct {
	process, member    string // log name and etcd --name
	clientURL, peerURL string
	dataDir            string
}

// newEtcdInstance picks free ports on ip for a new single-member etcd.
func newEtcdInstance(process, member, ip, dataDir string) (*etcdInstance, error) {
	clientPort, err := freePort(ip)
	if err != nil {
		return nil, err
	}
	peerPort, err := freePort(ip)
	if err != nil {
		return nil, err
	}
	url := func(port int) string { return "http://" + net.JoinHostPort(ip, strconv.Itoa(port)) }
	return &etcdInstance{process: process, member: member, clientURL: url(clientPort), peerURL: url(peerPort), dataDir: dataDir}, nil
}

// runEtcd starts e, records it with keep, and waits until it is healthy.
func (c *Cluster) runEtcd(ctx context.Context, e *etcdInstance, keep func(*Process)) (*Process, error) {
	proc, err := c.launch(e.process, []string{
		filepath.Join(c.opts.BinDir, "etcd"),
		"--name", e.member,
		"--data-dir", e.dataDir,
		"--listen-client-urls", e.clientURL, "--advertise-client-urls", e.clientURL,
		"--listen-peer-urls", e.peerURL, "--initial-advertise-peer-urls", e.peerURL,
		"--initial-cluster", e.member + "=" + e.peerURL,
		// Throwaway data: durability is not worth the disk latency.
		"--unsafe-no-fsync",
		"--log-level", "warn",
	}, keep)
	if err != nil {
		return nil, err
	}
	return proc, waitFor(ctx, etcdStartTimeout, proc, e.process+" health", func(ctx context.Context) error {
		return httpGetOK(ctx, http.DefaultClient, e.clientURL+"/health")
	})
}

// startKubeAPIServer runs kube-apiserver on the host veth address with the
// aggregation layer configured, and waits for /readyz.
func (c *Cluster) startKubeAPIServer(ctx context.Context) error {
	return retryOnPortClash(func() (*Process, error) {
		hostIP := c.net.HostIP.String()
		port, err := freePort(hostIP)
		if err != nil {
			return nil, err
		}
		c.ServerURL = "https://" + net.JoinHostPort(hostIP, strconv.Itoa(port))
		proc, err := c.launchKubeAPIServer(port)
		if err != nil {
			return nil, err
		}
		if err := c.writeAdminKubeconfig(); err != nil {
			return proc, err
		}
		return proc, c.waitKubeAPIServerReady(ctx, proc)
	})
}

// launchKubeAPIServer starts kube-apiserver on the host veth address and
// port, on the run's etcd.
func (c *Cluster) launchKubeAPIServer(port int) (*Process, error) {
	hostIP := c.net.HostIP.String()
	p := c.pki
	return c.launch("kube-apiserver", []string{
		filepath.Join(c.opts.BinDir, "kube-apiserver"),
		"--etcd-servers", c.EtcdURL,
		"--bind-address", hostIP, "--advertise-address", hostIP,
		"--secure-port", strconv.Itoa(port),
		"--cert-dir", filepath.Join(c.opts.WorkDir, "kube-apiserver"),
		"--tls-cert-file", p.APIServerCert, "--tls-private-key-file", p.APIServerKey,
		"--client-ca-file", p.CACert,
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", p.ServiceAccountKey,
		"--service-account-signing-key-file", p.ServiceAccountKey,
		"--service-cluster-ip-range", serviceClusterRange,
		"--authorization-mode", "Node,RBAC",
		"--requestheader-client-ca-file", p.FrontProxyCACert,
		"--requestheader-allowed-names", "front-proxy-client",
		"--requestheader-username-headers", "X-Remote-User",
		"--requestheader-group-headers", "X-Remote-Group",
		"--requestheader-extra-headers-prefix", "X-Remote-Extra-",
		"--proxy-client-cert-file", p.FrontProxyClientCert,
		"--proxy-client-key-file", p.FrontProxyClientKey,
		// No kube-proxy on the host: the aggregator must dial the
		// endpoint address, not the Service's cluster IP.
		"--enable-aggregator-routing=true",
	}, func(p *Process) { c.kubeAPIServer = p })
}

// RestartKubeAPIServer stops kube-apiserver and starts it again on the same
// address, port and etcd, returning once its /readyz passes. Clients keep
// their configs; their watches end and must be re-established, which is
// what it tests.
func (c *Cluster) RestartKubeAPIServer(ctx context.Context) error {
	c.mu.Lock()
	proc := c.kubeAPIServer
	c.mu.Unlock()
	if proc == nil {
		return errors.New("kube-apiserver is not running")
	}
	if err := proc.Stop(); err != nil {
		return fmt.Errorf("stopping kube-apiserver: %w", err)
	}
	u, err := url.Parse(c.ServerURL)
	if err != nil {
		return fmt.Errorf("parsing %s: %w", c.ServerURL, err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return fmt.Errorf("parsing the port of %s: %w", c.ServerURL, err)
	}
	// The port was ours a moment ago; the listener sets SO_REUSEADDR, so
	// connections in TIME_WAIT do not hold it. Another process may still
	// take it in between, hence a few attempts.
	for attempt := 1; ; attempt++ {
		proc, err = c.launchKubeAPIServer(port)
		if err != nil {
			return err
		}
		err = c.waitKubeAPIServerReady(ctx, proc)
		if err == nil || attempt == startAttempts || !strings.Contains(tailFile(proc.LogFile, 50), "address already in use") {
			return err
		}
		<-proc.Done()
		time.Sleep(time.Second)
	}
}

// waitKubeAPIServerReady waits for kube-apiserver's /readyz.
func (c *Cluster) waitKubeAPIServerReady(ctx context.Context, proc *Process) error {
	client, err := kubernetes.NewForConfig(c.AdminConfig)
	if err != nil {
		return fmt.Errorf("creating admin client: %w", err)
	}
	return waitFor(ctx, apiServerStartTimeout, proc, "kube-apiserver /readyz", func(ctx context.Context) error {
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return failedReadyzChecks(body, err)
		}
		return nil
	})
}

// retryOnPortClash starts a server again when it died because another
// process bound its port between freePort and the server's own bind.
func retryOnPortClash(start func() (*Process, error)) error {
	var err error
	for range startAttempts {
		var proc *Process
		proc, err = start()
		if err == nil || proc == nil {
			return err
		}
		select {
		case <-proc.Done():
			if strings.Contains(tailFile(proc.LogFile, 50), "address already in use") {
				continue
			}
		default:
		}
		return err
	}
	return err
}

// waitFor polls check until it succeeds, the deadline passes, ctx ends, or
// proc exits; errors carry the last check error or the process's log tail.
func waitFor(parent context.Context, timeout time.Duration, proc *Process, what string, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	var lastErr error
	for {
		checkCtx, checkCancel := context.WithTimeout(ctx, 5*time.Second)
		lastErr = check(checkCtx)
		checkCancel()
		if lastErr == nil {
			return nil
		}
		select {
		case <-proc.Done():
			return fmt.Errorf("waiting for %s: %w", what, proc.exitError())
		case <-ctx.Done():
			if parent.Err() != nil {
				// Cancelled by the caller (e.g. Ctrl-C): no need for logs.
				return fmt.Errorf("waiting for %s: %w", what, parent.Err())
			}
			return fmt.Errorf("waiting for %s: %w (last error: %w); last lines of %s:\n%s",
				what, ctx.Err(), lastErr, proc.LogFile, tailFile(proc.LogFile, 20))
		case <-ticker.C:
		}
	}
}

// failedReadyzChecks shortens a failed /readyz answer to its failing
// checks ("[-]poststarthook/rbac/bootstrap-roles failed: ...").
func failedReadyzChecks(body []byte, err error) error {
	var failed []string
	for line := range strings.Lines(string(body)) {
		if strings.HasPrefix(line, "[-]") {
			failed = append(failed, strings.TrimSpace(line))
		}
	}
	if len(failed) == 0 {
		return err
	}
	return fmt.Errorf("not ready: %s", strings.Join(failed, "; "))
}

func httpGetOK(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("building request for %s: %w", url, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// freePort asks the kernel for a port that is free on ip right now.
func freePort(ip string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, fmt.Errorf("finding a free port on %s: %w", ip, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
