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

package topology_test

import (
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	topologyapi "github.com/gridview/gridview/apis/topology"
	"github.com/gridview/gridview/pkg/topology"
)

// measureWAN compares the JSON bytes of a node's NodeEndpoints (all Services,
// averaged over nodes) with those of every EndpointSlice of the cluster.
func (r *report) measureWAN(e *topology.Engine, s *edge10k, nodes []string) {
	for _, node := range nodes {
		for _, svc := range e.Services("") {
			view, _ := e.View(node, svc)
			for _, slice := range view.Slices {
				if len(slice.Endpoints) == 0 {
					continue
				}
				r.viewBytes += jsonSize(&topologyapi.NodeEndpoints{
					ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: topology.Name(node, slice.Name)},
					NodeName:   node, ServiceName: svc.Name, Topology: view.Topology, Slice: slice,
				})
			}
		}
	}
	r.viewBytes /= len(nodes)
	for _, slice := range s.slices {
		r.clusterBytes += jsonSize(slice)
	}
	r.wanRatio = float64(r.clusterBytes) / float64(r.viewBytes)
}

func jsonSize(v any) int {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return len(data)
}

func (r *report) print() {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.Debug)
	fmt.Fprintln(w, "edge-10k\t engine\t target\t status\t views changed\t oracle, every view\t ratio\t oracle, changed Service\t ratio")
	for _, row := range r.rows {
		status := "met"
		if row.engine >= row.target {
			status = "NOT MET"
		}
		fmt.Fprintf(w, "%s\t %v\t < %v\t %s\t %d\t %s\t %s\t %s\t %s\n", row.change, row.engine.Round(time.Microsecond), row.target, status, row.changed,
			round(row.everyView), ratio(row.everyView, row.engine), round(row.serviceViews), ratio(row.serviceViews, row.engine))
	}
	heapStatus := "met"
	if r.heap >= 1<<30 {
		heapStatus = "NOT MET"
	}
	fmt.Fprintf(w, "Go heap after GC (engine and inputs)\t %d MiB\t < 1024 MiB\t %s\t \t \t \t \t\n", r.heap>>20, heapStatus)
	w.Flush()
	fmt.Printf("oracle: topologytest.Oracle's brute force run on every node as a per-node wrapper would, recomputing every view of the node or only its view of the changed Service; timed on %d of %d nodes (%d views for every view) and scaled.\n",
		r.sampleNodes, 10000, r.oracleViews)
	fmt.Printf("WAN: one node's NodeEndpoints for all Services %d KiB as JSON; every EndpointSlice of the cluster %d KiB; %.1fx less per node.\n",
		r.viewBytes>>10, r.clusterBytes>>10, r.wanRatio)
}

func round(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return d.Round(time.Millisecond).String()
}

func ratio(oracle, engine time.Duration) string {
	if oracle == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0fx", float64(oracle)/float64(engine))
}
