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

package ha

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/test/localcluster"
)

const cutOffMetric = "gridview_nodeendpoints_watchers_cut_off_total"

// A watcher that never reads is cut off once it lags the server's
// per-watcher buffer (10,000 events) behind; a watcher that reads gets every
// event of its own at once all along. (Fewer changes than that beyond what
// the buffers on the stalled stream's path hold cut it off 15 s after the
// path filled, as the watchstream tests show: the path's size depends on
// the kernel's and each hop's buffers, too much for a test to rely on.)
func TestWatcherThatNeverReadsIsCutOff(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t)
	const nodes, endpoints = 100, 20
	for i := range nodes {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-n%03d", ns, i)}}
		if _, err := kubeClient.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = kubeClient.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{})
		})
	}
	// Without topology annotations every node's view is every endpoint: a
	// slice write changes all 100 views.
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "churn"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := kubeClient.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// By hand, as the suite's site writes its slices: each round rewrites
	// every address in one write.
	sliceClient := kubeClient.DiscoveryV1().EndpointSlices(ns)
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "churn-x", Labels: map[string]string{discoveryv1.LabelServiceName: "churn"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Port: ptr.To[int32](8080)}},
	}
	write := func(round int) {
		slice.Endpoints = nil
		for i := range endpoints {
			slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
				Addresses: []string{fmt.Sprintf("10.%d.%d.%d", 100+round/250, round%250, i+1)}, NodeName: ptr.To(fmt.Sprintf("%s-n%03d", ns, i)),
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			})
		}
		var err error
		if round == 0 {
			slice, err = sliceClient.Create(ctx, slice, metav1.CreateOptions{})
		} else {
			slice, err = sliceClient.Update(ctx, slice, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatalf("write round %d: %v", round, err)
		}
	}
	write(0)
	firstNode := fmt.Sprintf("%s-n000", ns)
	localcluster.Eventually(t, 20*time.Second, "the views of every node", func(ctx context.Context) error {
		list, err := gridview.TopologyV1alpha1().NodeEndpoints(ns).List(ctx, metav1.ListOptions{})
		if err == nil && len(list.Items) != nodes {
			err = fmt.Errorf("%d views", len(list.Items))
		}
		return err
	})

	before := cutOffTotal(ctx, t)
	stalled := openStalledWatch(t, ns)
	defer stalled.Close()

	// The watcher that reads follows one node, as a wrapper does.
	w, err := gridview.TopologyV1alpha1().NodeEndpoints(ns).Watch(ctx, metav1.ListOptions{
		FieldSelector: "nodeName=" + firstNode, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	received := make(chan string, 10_000)
	go func() {
		defer close(received)
		for ev := range w.ResultChan() {
			if view, ok := ev.Object.(*topologyv1alpha1.NodeEndpoints); ok && ev.Type != watch.Bookmark {
				received <- addresses(view)[0]
			}
		}
	}()
	expectFirst := func(round int, within time.Duration) {
		want := fmt.Sprintf("10.%d.%d.1", 100+round/250, round%250)
		deadline := time.After(within)
		for {
			select {
			case got, ok := <-received:
				if !ok {
					t.Fatalf("the reading watcher was closed before round %d", round)
				}
				if got == want {
					return
				}
			case <-deadline:
				t.Fatalf("the reading watcher lacks round %d after %s", round, within)
			}
		}
	}
	expectFirst(0, 10*time.Second)

	// 100 events per round for the stalled watcher, one for the other.
	const rounds = 300
	start := time.Now()
	var slowest time.Duration
	for round := 1; round <= rounds; round++ {
		write(round)
		if round%25 == 0 {
			sent := time.Now()
			expectFirst(round, 5*time.Second)
			slowest = max(slowest, time.Since(sent))
		}
	}
	written := time.Now()
	t.Logf("%d rounds (%d view changes) in %s; the reading watcher lagged at most %s", rounds, rounds*nodes,
		written.Sub(start).Round(time.Millisecond), slowest.Round(time.Millisecond))

	localcluster.Eventually(t, 30*time.Second, "the stalled watcher cut off", func(ctx context.Context) error {
		if after := cutOffTotal(ctx, t); after <= before {
			return fmt.Errorf("%s stayed at %v", cutOffMetric, after)
		}
		return nil
	})
	t.Logf("the stalled watcher was cut off within %s of the last write", time.Since(written).Round(100*time.Millisecond))
	// Its stream ended: what the buffers hold, then EOF. A normal receive
	// buffer again, so that draining megabytes takes no time.
	if tcp, ok := stalled.NetConn().(*net.TCPConn); ok {
		_ = tcp.SetReadBuffer(4 << 20)
	}
	_ = stalled.SetReadDeadline(time.Now().Add(30 * time.Second))
	n, err := io.Copy(io.Discard, stalled)
	t.Logf("the stalled connection held %d more bytes, then: %v", n, err)
	if err != nil {
		t.Errorf("the stalled watch did not end: %v", err)
	}
}

// cutOffTotal sums the cut-off counter of every running replica: the
// aggregator picks one for each watch.
func cutOffTotal(ctx context.Context, t *testing.T) float64 {
	t.Helper()
	var total float64
	for _, r := range cluster.GridviewReplicas() {
		if !r.Running() {
			continue
		}
		v, err := metric(ctx, r, cutOffMetric)
		if err != nil {
			t.Fatal(err)
		}
		total += v
	}
	return total
}

// openStalledWatch opens, through kube-apiserver, an HTTP/1.1 watch of every
// view of ns on a connection with a small receive buffer, and never reads
// it past the status line. With "Connection: close", the end of the watch
// is the end of the connection.
func openStalledWatch(t *testing.T, ns string) *tls.Conn {
	t.Helper()
	cfg := cluster.AdminConfig
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig = tlsConfig.Clone()
	tlsConfig.NextProtos = []string{"http/1.1"}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: func(_, _ string, c syscall.RawConn) error {
		var sockErr error
		err := c.Control(func(fd uintptr) {
			sockErr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		if err != nil {
			return err
		}
		return sockErr
	}}
	conn, err := tls.DialWithDialer(dialer, "tcp", u.Host, tlsConfig)
	if err != nil {
		t.Fatal(err)
	}
	path := "/apis/topology.gridview.io/v1alpha1/namespaces/" + ns + "/nodeendpoints?watch=true&allowWatchBookmarks=true"
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: application/json\r\nConnection: close\r\n\r\n", path, u.Host); err != nil {
		t.Fatal(err)
	}
	// Read the status line only, one byte at a time, so that nothing of the
	// body is taken off the socket.
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReaderSize(oneByteReader{conn}, 16).ReadString('\n')
	if err != nil || !strings.Contains(line, " 200 ") {
		t.Fatalf("stalled watch: %q, %v", line, err)
	}
	_ = conn.SetReadDeadline(time.Time{})
	return conn
}

// oneByteReader hands out at most one byte per read.
type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) { return o.r.Read(p[:min(len(p), 1)]) }
