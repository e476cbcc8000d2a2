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

package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/gridview/gridview/test/e2e/framework"
	"github.com/gridview/gridview/test/localcluster"
)

// A gridview-apiserver started on an empty store — a Pod replaced onto an
// emptyDir, a lost volume — finds no ServiceGrid. That is no deletion: the
// Services carry traffic, and the controller deletes none of them, also when
// a change of one makes it look at it as the leader.
func TestEmptyStoreDeletesNoService(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t)
	if _, err := gridview.TopologyV1alpha1().ServiceGrids(ns).Create(ctx, framework.NewServiceGrid("kept"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitServiceGridReady(t, gridview, ns, "kept", 5*time.Second)
	before := mustService(t, ns, "kept-svc")
	// kube's garbage collector deletes a Service whose owner it cannot find
	// (docs/architecture.md); the store is lost while kube-controller-manager
	// is down, so that what is tested is gridview's own choice.
	if err := cluster.StopControllerManager(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cluster.StartControllerManager(context.Background()); err != nil {
			t.Errorf("starting kube-controller-manager again: %v", err)
		}
	})
	if err := cluster.RestartGridviewOnEmptyStore(ctx); err != nil {
		t.Fatalf("restart gridview-apiserver on an empty store: %v", err)
	}
	if _, err := gridview.TopologyV1alpha1().ServiceGrids(ns).Get(ctx, "kept", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("ServiceGrid after the restart on an empty store: %v, want NotFound", err)
	}
	localcluster.Eventually(t, 30*time.Second, "the restarted gridview-apiserver leading", replicaLeads(0))
	// Each change is a Service event the leader handles once its informers
	// have synced, which it may still be doing after it was elected.
	for i := range 10 {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"e2e-touch":%q}}}`, strconv.Itoa(i))
		if _, err := kubeClient.CoreV1().Services(ns).Patch(ctx, "kept-svc", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatalf("touching the Service (%d): %v", i, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	// Not vacuous: the leader looked at the Service and chose to keep it.
	localcluster.Eventually(t, 10*time.Second, "the leader logging that it keeps the Service", func(context.Context) error {
		log, err := os.ReadFile(cluster.GridviewReplicas()[0].LogFile)
		if err == nil && !strings.Contains(string(log), `"Keeping a Service whose ServiceGrid is missing but was not seen deleted" service="`+ns+`/kept-svc"`) {
			err = fmt.Errorf("no such line in %s", cluster.GridviewReplicas()[0].LogFile)
		}
		return err
	})
	after, err := kubeClient.CoreV1().Services(ns).Get(ctx, "kept-svc", metav1.GetOptions{})
	if err != nil || after.UID != before.UID {
		t.Fatalf("Service after the restart on an empty store: %v, uid %v, want the one of uid %s kept", err, after.UID, before.UID)
	}
	if ref := metav1.GetControllerOf(after); ref == nil || ref.UID != metav1.GetControllerOf(before).UID {
		t.Errorf("the kept Service's owner changed: %+v", after.OwnerReferences)
	}
}

// replicaLeads checks that gridview's i-th replica says it leads.
func replicaLeads(i int) func(context.Context) error {
	return func(ctx context.Context) error {
		client, err := kubernetes.NewForConfig(cluster.GridviewReplicas()[i].Config())
		if err != nil {
			return err
		}
		body, err := client.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			return err
		}
		leading, err := localcluster.MetricSample(string(body), "gridview_apiserver_leading")
		if err == nil && leading != 1 {
			err = fmt.Errorf("gridview_apiserver_leading = %v", leading)
		}
		return err
	}
}
