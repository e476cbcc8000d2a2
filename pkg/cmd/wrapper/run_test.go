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
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/gridview/gridview/pkg/wrapper"
)

// Run returns only once the state is saved a last time, so that main does
// not exit in the middle of the save; and a start removes the temporary
// file a save killed midway left.
func TestRunSavesTheStateBeforeReturning(t *testing.T) {
	// The WAN is down: the wrapper serves its cache.
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer upstream.Close()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"+
		"clusters: [{name: c, cluster: {server: "+upstream.URL+"}}]\n"+
		"contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {token: x}}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "cache")
	if err := os.Mkdir(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	// A state large enough that its save takes a while.
	var objects []runtime.Object
	for i := range 10_000 {
		objects = append(objects, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: fmt.Sprintf("echo-%05d", i), ResourceVersion: "5"}})
	}
	const saved = 5
	if err := wrapper.SaveCache(cache, "edge-1", saved, objects); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(cache, "state.cache.123456")
	if err := os.WriteFile(stale, []byte("half a save"), 0o600); err != nil {
		t.Fatal(err)
	}

	o := NewOptions()
	o.Kubeconfig, o.NodeName, o.CacheDir, o.Listen = kubeconfig, "edge-1", cache, "127.0.0.1:0"
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()
	// Running once it keeps the cache, whose start removes the temporary.
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, err := os.Stat(stale)
		return os.IsNotExist(err), nil
	}); err != nil {
		t.Fatalf("Run did not remove the temporary file a killed save left: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}

	rv, loaded, ok := wrapper.LoadCache(cache, "edge-1")
	if !ok || rv <= saved || len(loaded) != len(objects) {
		t.Errorf("when Run returned, the cache held resourceVersion %d and %d objects (loaded %v), want the restarted state's, past %d, and %d objects",
			rv, len(loaded), ok, saved, len(objects))
	}
	entries, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "state.cache.") {
			t.Errorf("a temporary file is left: %s", e.Name())
		}
	}
}
