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
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/inputlog"
	"github.com/gridview/gridview/pkg/topology"
)

// Feed applies gridview's input log to a store, a revision at a time, in
// the log's order: every replica's store then holds the same views at the
// same resourceVersion.
type Feed struct {
	store    *Store
	recorder record.EventRecorder
	// reports says whether this replica sends the Events about malformed
	// annotations and the rule chosen among several: the writer of the log
	// does, once the revisions it applies are news.
	reports func(revision int64) bool
	// chosen holds, for each Service with several topology rules, the rules
	// its last Event named, so that it is reported once per change, and to
	// each Service of that name: one deleted and created again while the
	// writer was busy comes as an update.
	chosen map[types.NamespacedName]chosenRules
}

var _ inputlog.Sink = &Feed{}

// NewFeed returns a feed of store; recorder reports malformed topology
// annotations on their Service or Namespace, and the rule chosen for a
// Service that carries several, whenever reports says so.
func NewFeed(store *Store, recorder record.EventRecorder, reports func(revision int64) bool) *Feed {
	return &Feed{store: store, recorder: recorder, reports: reports, chosen: map[types.NamespacedName]chosenRules{}}
}

// Load replaces the store's state with the log's at a revision.
func (f *Feed) Load(revision int64, objects []metav1.Object) {
	var inputs Inputs
	for _, obj := range objects {
		switch obj := obj.(type) {
		case *corev1.Namespace:
			inputs.Namespaces = append(inputs.Namespaces, obj)
		case *corev1.Node:
			inputs.Nodes = append(inputs.Nodes, obj)
		case *corev1.Service:
			inputs.Services = append(inputs.Services, obj)
		case *discoveryv1.EndpointSlice:
			inputs.Slices = append(inputs.Slices, obj)
		}
	}
	f.store.load(revision, inputs)
	clear(f.chosen)
	for _, svc := range inputs.Services {
		// Only a change is reported: Events are ephemeral, and reporting
		// what a start holds would send one per Service per start.
		f.noteRules(svc)
	}
	klog.InfoS("Loaded the node views", "revision", revision, "nodes", len(inputs.Nodes), "services", len(inputs.Services),
		"endpointSlices", len(inputs.Slices), "namespaces", len(inputs.Namespaces))
}

// Apply applies the changes of one revision of the log, in order.
func (f *Feed) Apply(revision int64, changes []inputlog.Change) {
	f.store.beginRevision(revision)
	report := f.reports(revision)
	for _, change := range changes {
		if change.Object == nil {
			f.remove(change.Key)
			continue
		}
		f.set(change.Object, report)
	}
	f.store.endRevision(revision)
}

// Progress moves the store to a revision in which the log changed nothing
// since the last it applied.
func (f *Feed) Progress(revision int64) { f.store.endRevision(revision) }

func (f *Feed) set(obj metav1.Object, report bool) {
	if malformed := f.store.set(obj); malformed != "" && report {
		f.reportMalformed(obj.(interface {
			metav1.Object
			runtime.Object
		}), malformed)
	}
	if svc, ok := obj.(*corev1.Service); ok {
		if rules, news := f.noteRules(svc); news && report {
			f.recorder.Eventf(svc, corev1.EventTypeNormal, "TopologyRuleChosen",
				"The Service carries several topology rules (%s): %s applies", strings.Join(rules, ", "), rules[0])
		}
	}
}

func (f *Feed) remove(key inputlog.Key) {
	switch key.Kind {
	case inputlog.Nodes:
		f.store.deleteNode(key.Name)
	case inputlog.Services:
		f.store.deleteService(key.NamespacedName)
		delete(f.chosen, key.NamespacedName)
	case inputlog.Namespaces:
		f.store.deleteNamespace(key.Name)
	default:
		f.store.deleteEndpointSlice(key.NamespacedName)
	}
}

// reportMalformed reports a malformed annotation of a Service or Namespace:
// a malformed rule leaves the Services it prunes unpruned, a malformed
// min-ready leaves the tiers ungated.
func (f *Feed) reportMalformed(obj interface {
	metav1.Object
	runtime.Object
}, why string) {
	klog.InfoS("Ignoring a malformed topology annotation", "object", klog.KObj(obj), "reason", why)
	f.recorder.Eventf(obj, corev1.EventTypeWarning, "MalformedTopology",
		"A topology annotation cannot be parsed, so it is ignored: %s", why)
}

// noteRules records which of a Service's several topology rules applies,
// and returns them and whether that is news: the Event is sent once per
// change of them. A ServiceGrid's Service is left out: its topologyKeys and
// topology.gridview.io/keys are one rule rendered twice, not a choice
// between rules.
func (f *Feed) noteRules(svc *corev1.Service) (rules []string, news bool) {
	key := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	rules = topology.Rules(svc)
	if len(rules) < 2 || renderedByServiceGrid(svc) {
		delete(f.chosen, key)
		return nil, false
	}
	chosen := chosenRules{service: svc.UID, rules: strings.Join(rules, ", ")}
	if f.chosen[key] == chosen {
		return rules, false
	}
	f.chosen[key] = chosen
	return rules, true
}

// chosenRules are the rules an Event named to one Service.
type chosenRules struct {
	service types.UID
	rules   string
}

// renderedByServiceGrid says whether a topology.gridview.io ServiceGrid
// controls the Service.
func renderedByServiceGrid(svc *corev1.Service) bool {
	_, ok := topologyapi.ControllingServiceGrid(svc)
	return ok
}
