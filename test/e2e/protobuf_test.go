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
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"net/url"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	restwatch "k8s.io/client-go/rest/watch"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/generated/clientset/versioned"
	"github.com/gridview/gridview/generated/clientset/versioned/scheme"
	"github.com/gridview/gridview/test/e2e/framework"
)

const groupPath = "/apis/topology.gridview.io/v1alpha1"

// protobufClient reads gridview's resources through kube-apiserver's
// aggregation layer with Accept: application/vnd.kubernetes.protobuf only, as
// a client that cannot read JSON would, and checks what comes back is
// protobuf before decoding it.
type protobufClient struct {
	http *http.Client
	host string
	info runtime.SerializerInfo
}

func newProtobufClient(t *testing.T) protobufClient {
	t.Helper()
	httpClient, err := rest.HTTPClientFor(cluster.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		t.Fatal("the clientset's codecs have no protobuf serializer")
	}
	return protobufClient{http: httpClient, host: cluster.AdminConfig.Host, info: info}
}

// do sends a GET of path and query and returns the response once its
// status is 200 and its media type protobuf (stream=watch for a watch).
func (c protobufClient) do(ctx context.Context, t *testing.T, path string, query url.Values) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.host+path+"?"+query.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", runtime.ContentTypeProtobuf)
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", req.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("GET %s: %s: %q", req.URL, resp.Status, body)
	}
	mediaType, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	wantStream := ""
	if query.Get("watch") != "" {
		wantStream = "watch"
	}
	if err != nil || mediaType != runtime.ContentTypeProtobuf || params["stream"] != wantStream {
		resp.Body.Close()
		t.Fatalf("GET %s: Content-Type %q, want %s (stream=%q)", req.URL, resp.Header.Get("Content-Type"), runtime.ContentTypeProtobuf, wantStream)
	}
	return resp
}

// get decodes the protobuf body of a get or list.
func (c protobufClient) get(t *testing.T, path string, query url.Values) runtime.Object {
	t.Helper()
	resp := c.do(context.Background(), t, path, query)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	if !bytes.HasPrefix(body, []byte("k8s\x00")) {
		t.Fatalf("%s: body is not a Kubernetes protobuf message: %q", path, body[:min(len(body), 16)])
	}
	obj, _, err := c.info.Serializer.Decode(body, nil, nil)
	if err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	return obj
}

// watchUntil watches path in protobuf from resourceVersion, calls change
// once the stream is open, and returns the first event that match accepts.
func (c protobufClient) watchUntil(t *testing.T, path string, query url.Values, change func(), match func(watch.EventType, runtime.Object) bool) runtime.Object {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	query.Set("watch", "true")
	resp := c.do(ctx, t, path, query)
	defer resp.Body.Close()
	frames := c.info.StreamSerializer.NewFrameReader(resp.Body)
	decoder := restwatch.NewDecoder(streaming.NewDecoder(frames, c.info.StreamSerializer.Serializer), c.info.Serializer)
	defer decoder.Close()
	change()
	for {
		eventType, obj, err := decoder.Decode()
		if err != nil {
			t.Fatalf("watch %s: no matching event: %v", path, err)
		}
		if eventType == watch.Error {
			t.Fatalf("watch %s: error event: %v", path, obj)
		}
		if match(eventType, obj) {
			return obj
		}
	}
}

// protobufClientset is the generated clientset asking for protobuf, as
// docs/reference.md tells a client to: typed clients send and accept JSON
// unless told.
func protobufClientset(t *testing.T) versioned.Interface {
	t.Helper()
	config := rest.CopyConfig(cluster.AdminConfig)
	config.ContentType = runtime.ContentTypeProtobuf
	config.AcceptContentTypes = runtime.ContentTypeProtobuf
	client, err := versioned.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func TestProtobufNodeEndpoints(t *testing.T) {
	ctx := context.Background()
	s := newRuleSite(t, map[string]map[string]string{"edge": {}})
	ns, node := s.NS, s.Node("edge")
	s.createService(t, "web", func(*corev1.Service) {})
	s.runPods(t, "web", podOn{"edge", true})

	onNode := metav1.ListOptions{FieldSelector: "nodeName=" + node}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := gridview.TopologyV1alpha1().NodeEndpoints(ns).List(ctx, onNode)
		return err == nil && len(list.Items) > 0, nil
	}); err != nil {
		t.Fatalf("no NodeEndpoints for %s: %v", node, err)
	}

	client := newProtobufClient(t)
	selector := url.Values{"fieldSelector": {"nodeName=" + node}}
	var list *topologyv1alpha1.NodeEndpointsList
	t.Run("list", func(t *testing.T) {
		for _, path := range []string{
			groupPath + "/namespaces/" + ns + "/nodeendpoints",
			groupPath + "/nodeendpoints", // every namespace, as a node's informer lists
		} {
			got, ok := client.get(t, path, selector).(*topologyv1alpha1.NodeEndpointsList)
			if !ok || len(got.Items) == 0 || got.ResourceVersion == "" {
				t.Fatalf("%s: got %#v, want a NodeEndpointsList with items and a resourceVersion", path, got)
			}
			// Every namespace holds the view of default/kubernetes too.
			web := 0
			for _, item := range got.Items {
				if item.NodeName != node {
					t.Fatalf("%s: item %s/%s is for node %q", path, item.Namespace, item.Name, item.NodeName)
				}
				if item.Namespace == ns && item.ServiceName == "web" {
					web++
				}
			}
			if web == 0 {
				t.Fatalf("%s: no view of %s/web among %d items", path, ns, len(got.Items))
			}
			if list == nil { // the namespace's list names the object to get
				list = got
			}
		}
	})
	if list == nil {
		t.FailNow()
	}
	name := list.Items[0].Name

	t.Run("get", func(t *testing.T) {
		got, ok := client.get(t, groupPath+"/namespaces/"+ns+"/nodeendpoints/"+name, nil).(*topologyv1alpha1.NodeEndpoints)
		if !ok || got.Name != name || got.NodeName != node {
			t.Fatalf("got %#v, want NodeEndpoints %s of node %s", got, name, node)
		}
	})

	t.Run("watch", func(t *testing.T) {
		query := url.Values{"fieldSelector": {"nodeName=" + node}, "resourceVersion": {list.ResourceVersion}}
		got := client.watchUntil(t, groupPath+"/namespaces/"+ns+"/nodeendpoints", query, func() {
			s.runPods(t, "web", podOn{"edge", true})
		}, func(eventType watch.EventType, obj runtime.Object) bool {
			view, ok := obj.(*topologyv1alpha1.NodeEndpoints)
			return ok && eventType != watch.Bookmark && view.NodeName == node && len(framework.Addresses(view)) == 2
		})
		if view := got.(*topologyv1alpha1.NodeEndpoints); view.ResourceVersion == "" {
			t.Fatalf("watched view has no resourceVersion: %#v", view)
		}
	})

	// The typed clientset asked for protobuf reads the same objects as the
	// default one reads in JSON.
	t.Run("clientset", func(t *testing.T) {
		var inJSON, inProtobuf *topologyv1alpha1.NodeEndpointsList
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			var err error
			if inJSON, err = gridview.TopologyV1alpha1().NodeEndpoints(ns).List(ctx, onNode); err != nil {
				return false, err
			}
			if inProtobuf, err = protobufClientset(t).TopologyV1alpha1().NodeEndpoints(ns).List(ctx, onNode); err != nil {
				return false, err
			}
			// Equal once no change falls between the two lists.
			return inJSON.ResourceVersion == inProtobuf.ResourceVersion, nil
		})
		if err != nil {
			t.Fatalf("listing in JSON and protobuf: %v", err)
		}
		if !apiequality.Semantic.DeepEqual(inJSON.Items, inProtobuf.Items) {
			t.Fatalf("protobuf list differs from the JSON one:\njson:     %+v\nprotobuf: %+v", inJSON.Items, inProtobuf.Items)
		}
	})
}

func TestProtobufServiceGrid(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t)
	// Written in protobuf too: the server decodes a protobuf body.
	created, err := protobufClientset(t).TopologyV1alpha1().ServiceGrids(ns).Create(ctx, framework.NewServiceGrid("proto"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create in protobuf: %v", err)
	}
	if created.UID == "" || created.Spec.GridUniqKey != "superedge.io/nodeunit" || len(created.Spec.Template.Ports) != 1 {
		t.Fatalf("created %#v, want the ServiceGrid sent", created)
	}

	client := newProtobufClient(t)
	path := groupPath + "/namespaces/" + ns + "/servicegrids"
	var list *topologyv1alpha1.ServiceGridList
	t.Run("list", func(t *testing.T) {
		got, ok := client.get(t, path, nil).(*topologyv1alpha1.ServiceGridList)
		if !ok || len(got.Items) != 1 || got.Items[0].UID != created.UID {
			t.Fatalf("got %#v, want a ServiceGridList of %s", got, created.Name)
		}
		list = got
	})
	if list == nil {
		t.FailNow()
	}

	t.Run("get", func(t *testing.T) {
		got, ok := client.get(t, path+"/proto", nil).(*topologyv1alpha1.ServiceGrid)
		if !ok || got.UID != created.UID || got.Spec.Template.Ports[0].Port != 80 {
			t.Fatalf("got %#v, want ServiceGrid %s", got, created.Name)
		}
	})

	t.Run("watch", func(t *testing.T) {
		query := url.Values{"resourceVersion": {list.ResourceVersion}}
		client.watchUntil(t, path, query, func() {
			patch := []byte(`{"metadata":{"labels":{"wire":"protobuf"}}}`)
			if _, err := gridview.TopologyV1alpha1().ServiceGrids(ns).Patch(ctx, "proto", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Errorf("patch: %v", err)
			}
		}, func(eventType watch.EventType, obj runtime.Object) bool {
			sg, ok := obj.(*topologyv1alpha1.ServiceGrid)
			return ok && eventType == watch.Modified && sg.Labels["wire"] == "protobuf"
		})
	})

	t.Run("clientset", func(t *testing.T) {
		got, err := protobufClientset(t).TopologyV1alpha1().ServiceGrids(ns).Get(ctx, "proto", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Labels["wire"] != "protobuf" {
			t.Fatalf("got labels %v, want the patched label", got.Labels)
		}
	})
}
