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

package viewstore

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/inputlog"
	"github.com/gridview/gridview/pkg/topology"
)

// logFeed is a feed of a store, fed a log the test writes: each apply is
// one revision after the last, and the feed reports Events whenever
// reporting is set.
type logFeed struct {
	*Feed
	t        *testing.T
	store    *Store
	recorder *record.FakeRecorder
	revision int64
	// reporting is what reports answers; asked the revisions it was asked
	// about.
	reporting bool
	asked     []int64
}

// loadFeed loads a feed with objects at revision 10, as a replica whose log
// etcd compacted there.
func loadFeed(t *testing.T, objects ...metav1.Object) *logFeed {
	t.Helper()
	f := &logFeed{t: t, store: New(testOptions), recorder: record.NewFakeRecorder(100), revision: 10, reporting: true}
	f.Feed = NewFeed(f.store, f.recorder, func(revision int64) bool {
		f.asked = append(f.asked, revision)
		return f.reporting
	})
	f.Load(f.revision, objects)
	if got, want := f.store.resourceVersion(), revisionEnd(f.revision); got != want {
		t.Fatalf("loaded at resourceVersion %d, want the end of revision %d, %d", got, f.revision, want)
	}
	return f
}

// apply writes one revision of changes and applies it: the store ends at the
// revision's end, and asked reports of that revision alone.
func (f *logFeed) apply(changes ...inputlog.Change) {
	f.t.Helper()
	// etcd numbers every write, the ServiceGrids' too: the log's
	// revisions need not follow one another.
	f.revision += 3
	f.asked = nil
	f.Apply(f.revision, changes)
	if got, want := f.store.resourceVersion(), revisionEnd(f.revision); got != want {
		f.t.Fatalf("after revision %d the store is at %d, want its end %d", f.revision, got, want)
	}
	if !slices.Equal(f.asked, []int64{f.revision}) {
		f.t.Errorf("applying revision %d asked whether to report %v, want that revision", f.revision, f.asked)
	}
}

// events drains the Events sent so far.
func (f *logFeed) events() []string {
	var out []string
	for {
		select {
		case event := <-f.recorder.Events:
			out = append(out, event)
		default:
			return out
		}
	}
}

// expectEventsSent checks the Events sent since the last call, in order.
func (f *logFeed) expectEventsSent(what string, want ...string) {
	f.t.Helper()
	if got := f.events(); !slices.Equal(got, want) {
		f.t.Errorf("%s: Events %q, want %q", what, got, want)
	}
}

func set(kind inputlog.Kind, obj metav1.Object) inputlog.Change {
	return inputlog.Change{Key: inputlog.KeyOf(kind, obj), Object: obj}
}

func removed(kind inputlog.Kind, namespace, name string) inputlog.Change {
	return inputlog.Change{Key: inputlog.Key{Kind: kind, NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}}
}

// viewOf is a NodeEndpoints of namespace demo, nil when there is none.
func viewOf(t *testing.T, store *Store, name string) *topologyapi.NodeEndpoints {
	t.Helper()
	view, err := store.Get("demo", name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return view
}

const (
	malformedEvent = corev1.EventTypeWarning + " MalformedTopology A topology annotation cannot be parsed, so it is ignored: "
	chosenEvent    = corev1.EventTypeNormal + " TopologyRuleChosen The Service carries several topology rules "
)

// startsWith says whether each Event starts as wanted.
func startsWith(events []string, prefixes ...string) bool {
	if len(events) != len(prefixes) {
		return false
	}
	for i, event := range events {
		if !strings.HasPrefix(event, prefixes[i]) {
			return false
		}
	}
	return true
}

func TestFeedLoadsThenAppliesTheLog(t *testing.T) {
	f := loadFeed(t, node("edge-1", "a"), service("demo", "echo", nil, anyMatchUnit))
	// Two inputs in one revision: the second's node sees the first's slice.
	f.apply(set(inputlog.EndpointSlices, slice("demo", "echo", "edge-2")), set(inputlog.Nodes, node("edge-2", "a")))
	if view := viewOf(t, f.store, "edge-1..echo-x"); view == nil || len(view.Slice.Endpoints) != 1 {
		t.Fatalf("edge-1 does not see edge-2's endpoint in its unit: %v", view)
	}

	f.apply(set(inputlog.Services, service("demo", "echo", nil, map[string]string{topology.AnnotationTopologyKeys: "[bad"})))
	if events := f.events(); !startsWith(events, malformedEvent) {
		t.Errorf("a malformed annotation: Events %q, want one %s", events, malformedEvent)
	}
	if view := viewOf(t, f.store, "edge-1..echo-x"); view == nil || view.Topology.Rule != "" {
		t.Errorf("a malformed rule still prunes: %v", view)
	}
	// Not news: the Service changed, its annotation did not.
	f.apply(set(inputlog.Services, service("demo", "echo", map[string]string{"app": "echo"}, map[string]string{topology.AnnotationTopologyKeys: "[bad"})))
	f.expectEventsSent("the same malformed annotation again")

	f.apply(removed(inputlog.EndpointSlices, "demo", "echo-x"))
	if view := viewOf(t, f.store, "edge-1..echo-x"); view != nil {
		t.Errorf("the deleted slice's NodeEndpoints stayed: %v", view)
	}
	f.apply(removed(inputlog.Nodes, "", "edge-2"), removed(inputlog.Services, "demo", "echo"))
	if list, err := f.store.List(Filter{}, ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Errorf("views left after every Service went: %v (%v)", names(list), err)
	}
	f.expectEventsSent("deletions")
}

func TestFeedAppliesNamespaceDefaultsAndReportsRules(t *testing.T) {
	demo := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo", Annotations: map[string]string{topology.AnnotationGridviewKeys: "unit"}}}
	// The Namespace comes last: its default applies from the start anyway.
	f := loadFeed(t, node("edge-1", "a"), node("edge-2", "b"), service("demo", "echo", nil, nil), slice("demo", "echo", "edge-2"), demo)
	if view := viewOf(t, f.store, "edge-2..echo-x"); view == nil || view.Topology.Rule != topology.RuleNamespace {
		t.Fatalf("edge-2 does not see its own endpoint by the Namespace's default: %v", view)
	}
	if view := viewOf(t, f.store, "edge-1..echo-x"); view != nil {
		t.Errorf("edge-1 sees edge-2's endpoint in another unit, though the Namespace's default was loaded first: %v", view)
	}

	namespace := func(annotations map[string]string) inputlog.Change {
		ns := demo.DeepCopy()
		ns.Annotations = annotations
		return set(inputlog.Namespaces, ns)
	}
	f.apply(namespace(nil))
	if view := viewOf(t, f.store, "edge-1..echo-x"); view == nil || view.Topology.Rule != "" {
		t.Errorf("the default's removal did not unprune the Service: %v", view)
	}
	f.expectEventsSent("a default removed")
	f.apply(namespace(map[string]string{topology.AnnotationGridviewKeys: "*,unit"}))
	if events := f.events(); !startsWith(events, malformedEvent) {
		t.Errorf("a malformed default: Events %q, want one %s", events, malformedEvent)
	}

	several := map[string]string{topology.AnnotationGridviewKeys: "unit", topology.AnnotationOpenYurtTopologyKeys: "openyurt.io/nodepool"}
	for _, labels := range []map[string]string{nil, {"app": "echo"}} {
		f.apply(set(inputlog.Services, service("demo", "echo", labels, several)))
		if view := viewOf(t, f.store, "edge-2..echo-x"); view == nil || view.Labels["app"] != labels["app"] || view.Topology.Rule != topology.RuleGridview {
			t.Errorf("the Service's labels %v and rule: %v", labels, view)
		}
	}
	f.expectEventsSent("the same rules twice", chosenEvent+"(Gridview, OpenYurt): Gridview applies")
}

// TestFeedReportsRuleChangesOnly checks what is news of a Service's several
// rules: only the last step's TopologyRuleChosen Event is sent.
func TestFeedReportsRuleChangesOnly(t *testing.T) {
	gridviewOpenYurt := map[string]string{topology.AnnotationGridviewKeys: "unit", topology.AnnotationOpenYurtTopologyKeys: "openyurt.io/nodepool"}
	gridviewSuperEdge := map[string]string{topology.AnnotationGridviewKeys: "unit,*", topology.AnnotationTopologyKeys: `["unit","*"]`}
	allThree := map[string]string{topology.AnnotationGridviewKeys: "unit", topology.AnnotationTopologyKeys: `["unit"]`,
		topology.AnnotationOpenYurtTopologyKeys: "openyurt.io/nodepool"}
	rendered := func(name string, annotations map[string]string) *corev1.Service {
		svc := service("demo", name, nil, annotations)
		svc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "topology.gridview.io/v1alpha1", Kind: "ServiceGrid", Name: name, UID: "u", Controller: ptr.To(true)}}
		return svc
	}
	ownedByOthers := rendered("other", gridviewSuperEdge)
	ownedByOthers.OwnerReferences[0].APIVersion = "example.com/v1"
	withUID := func(svc *corev1.Service, uid types.UID) *corev1.Service {
		svc.UID = uid
		return svc
	}
	tests := []struct {
		name    string
		atStart []metav1.Object
		// updates are applied in order, each a revision; the last alone
		// must be reported.
		updates []inputlog.Change
		want    string
	}{{
		name:    "rules found at start are not news, nor is another change of their Service",
		atStart: []metav1.Object{service("demo", "echo", nil, gridviewOpenYurt)},
		updates: []inputlog.Change{
			set(inputlog.Services, service("demo", "echo", map[string]string{"app": "echo"}, gridviewOpenYurt)),
			set(inputlog.Services, service("demo", "echo", nil, allThree)),
		},
		want: "(Gridview, SuperEdge, OpenYurt): Gridview applies",
	}, {
		name:    "a ServiceGrid's Service found at start",
		atStart: []metav1.Object{rendered("grid", gridviewSuperEdge)},
		updates: []inputlog.Change{set(inputlog.Services, service("demo", "echo", nil, gridviewOpenYurt))},
		want:    "(Gridview, OpenYurt): Gridview applies",
	}, {
		name: "a ServiceGrid's Service rendered while running",
		updates: []inputlog.Change{
			set(inputlog.Services, rendered("grid", gridviewSuperEdge)),
			set(inputlog.Services, service("demo", "echo", nil, gridviewOpenYurt)),
		},
		want: "(Gridview, OpenYurt): Gridview applies",
	}, {
		name:    "a Service created again while the writer was busy: an update of another UID",
		atStart: []metav1.Object{withUID(service("demo", "echo", nil, gridviewOpenYurt), "first")},
		updates: []inputlog.Change{set(inputlog.Services, withUID(service("demo", "echo", nil, gridviewOpenYurt), "second"))},
		want:    "(Gridview, OpenYurt): Gridview applies",
	}, {
		name:    "a Service deleted, then created again",
		atStart: []metav1.Object{withUID(service("demo", "echo", nil, gridviewOpenYurt), "first")},
		updates: []inputlog.Change{
			removed(inputlog.Services, "demo", "echo"),
			set(inputlog.Services, withUID(service("demo", "echo", nil, gridviewOpenYurt), "first")),
		},
		want: "(Gridview, OpenYurt): Gridview applies",
	}, {
		name:    "a Service another group's ServiceGrid controls",
		updates: []inputlog.Change{set(inputlog.Services, ownedByOthers)},
		want:    "(Gridview, SuperEdge): Gridview applies",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := loadFeed(t, tc.atStart...)
			for i, change := range tc.updates {
				f.apply(change)
				if i < len(tc.updates)-1 {
					f.expectEventsSent("before the last step")
				}
			}
			f.expectEventsSent("the last step", chosenEvent+tc.want)
		})
	}
}

// TestFeedReportsOnlyWhatReportsAllows checks that a replica that does not
// report, as every one but the log's writer, or the writer while it reads
// revisions older than its lead, sends no Event, though its views follow
// the log; and that what it applied then is no news once it reports.
func TestFeedReportsOnlyWhatReportsAllows(t *testing.T) {
	several := map[string]string{topology.AnnotationGridviewKeys: "unit", topology.AnnotationOpenYurtTopologyKeys: "openyurt.io/nodepool"}
	malformed := map[string]string{topology.AnnotationGridviewKeys: "*,unit"}
	// A load reports nothing, whatever reports says: Events are ephemeral,
	// and every replica loads.
	f := loadFeed(t, node("edge-1", "a"), slice("demo", "echo", "edge-1"), service("demo", "echo", nil, several),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo", Annotations: malformed}})
	f.expectEventsSent("a load")
	if f.asked != nil {
		t.Errorf("a load asked whether to report revisions %v", f.asked)
	}

	f.reporting = false
	f.apply(set(inputlog.Services, service("demo", "echo", nil, map[string]string{topology.AnnotationTopologyKeys: "[bad"})),
		set(inputlog.Namespaces, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other", Annotations: malformed}}))
	f.apply(set(inputlog.Services, service("demo", "other", nil, several)))
	f.expectEventsSent("revisions not to report")
	if f.store.malformed(service("demo", "echo", nil, nil)) == "" || f.store.namespaceMalformed("other") == "" {
		t.Error("the store did not apply the malformed annotations it was not to report")
	}
	if view := viewOf(t, f.store, "edge-1..echo-x"); view == nil || view.Topology.Rule != "" {
		t.Errorf("the views did not follow a revision not reported: %v", view)
	}

	// What was applied unreported is no news later.
	f.reporting = true
	f.apply(set(inputlog.Services, service("demo", "other", map[string]string{"app": "other"}, several)),
		set(inputlog.Services, service("demo", "echo", map[string]string{"app": "echo"}, map[string]string{topology.AnnotationTopologyKeys: "[bad"})))
	f.expectEventsSent("what was applied unreported, again")
	f.apply(set(inputlog.Namespaces, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "third", Annotations: malformed}}),
		set(inputlog.Services, service("demo", "echo", nil, several)))
	if events := f.events(); !startsWith(events, malformedEvent, chosenEvent+"(Gridview, OpenYurt): Gridview applies") {
		t.Errorf("news once reported: Events %q, want a MalformedTopology then a TopologyRuleChosen", events)
	}
}

// TestFeedCountsMalformedDefaults follows one Namespace through the gauge
// of malformed defaults, from the load on.
func TestFeedCountsMalformedDefaults(t *testing.T) {
	RegisterMetrics()
	malformed := map[string]string{topology.AnnotationGridviewKeys: "*,unit"}
	demo := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo", Annotations: malformed}}
	f := loadFeed(t, demo, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fine"}})
	if got := gaugeValue(t, malformedDefaults); got != 1 {
		t.Fatalf("%v malformed Namespace defaults after the load, want 1", got)
	}
	tests := []struct {
		name        string
		annotations map[string]string
		deleted     bool
		want        float64
	}{
		{name: "mended", annotations: map[string]string{topology.AnnotationGridviewKeys: "unit"}, want: 0},
		{name: "broken again", annotations: malformed, want: 1},
		{name: "deleted", deleted: true, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f.t = t
			if tc.deleted {
				f.apply(removed(inputlog.Namespaces, "", demo.Name))
			} else {
				ns := demo.DeepCopy()
				ns.Annotations = tc.annotations
				f.apply(set(inputlog.Namespaces, ns))
			}
			if got := gaugeValue(t, malformedDefaults); got != tc.want {
				t.Errorf("%v malformed Namespace defaults, want %v", got, tc.want)
			}
		})
	}
}
