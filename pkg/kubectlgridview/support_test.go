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

package kubectlgridview

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	corefake "k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	clienttesting "k8s.io/client-go/testing"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/generated/clientset/versioned"
	"github.com/gridview/gridview/generated/clientset/versioned/fake"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// servedResources is discovery when gridview-apiserver serves the group.
var servedResources = []*metav1.APIResourceList{{
	GroupVersion: v1alpha1.SchemeGroupVersion.String(),
	APIResources: []metav1.APIResource{
		{Name: "topologyreviews", Namespaced: true, Kind: "TopologyReview", Verbs: []string{"create"}},
		{Name: "serviceroutes", Namespaced: true, Kind: "ServiceRoutes", Verbs: []string{"get"}},
	},
}}

// fakeTopology is a fake clientset whose group is served, answering every
// request of the group (not discovery) with react.
func fakeTopology(react clienttesting.ReactionFunc) *fake.Clientset {
	client := fake.NewClientset()
	client.Resources = servedResources
	client.PrependReactor("*", "*", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetResource().Group != v1alpha1.SchemeGroupVersion.Group {
			return false, nil, nil
		}
		return react(action)
	})
	return client
}

// run runs kubectl-gridview with args against topology and core, with an
// empty kubeconfig so that nothing of the machine's leaks in.
func run(t *testing.T, topology versioned.Interface, core corev1client.CoreV1Interface, args ...string) (string, error) {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if core == nil {
		core = corefake.NewClientset().CoreV1()
	}
	o := &options{
		configFlags: genericclioptions.NewConfigFlags(true),
		streams:     streams,
		topology:    func() (versioned.Interface, error) { return topology, nil },
		core:        func() (corev1client.CoreV1Interface, error) { return core, nil },
	}
	cmd := newRootCommand(o)
	cmd.SetArgs(append([]string{"--kubeconfig", kubeconfig}, args...))
	err := cmd.ExecuteContext(t.Context())
	return out.String(), err
}

// checkGolden compares got with testdata/name, or rewrites it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s (run with -update to write it): %v", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -update to accept it):\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// returning answers every action with obj, or err.
func returning(obj runtime.Object, err error) clienttesting.ReactionFunc {
	return func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, obj, err
	}
}
