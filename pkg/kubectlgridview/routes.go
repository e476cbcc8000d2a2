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
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
)

type routesOptions struct {
	*options
	output string
}

func newRoutesCommand(o *options) *cobra.Command {
	r := &routesOptions{options: o}
	cmd := &cobra.Command{
		Use:   "routes SERVICE",
		Short: "List where every group of nodes routes a Service's traffic",
		Long: `Routes gets the Service's ServiceRoutes and prints one row per group of nodes
that route alike: the group (its value of the rule's first key; -o wide shows
every key), its node count, the route (local, fallback-N, all or none), the
tier chosen and the ready endpoints a node of it routes to.`,
		Example: `  kubectl gridview routes ordered -n demo
  kubectl gridview routes echo-svc -n demo -o wide`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: o.completeService,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains([]string{"", "wide", "json", "yaml"}, r.output) {
				return fmt.Errorf("unsupported output %q: routes prints a table, wide, json or yaml", r.output)
			}
			routes, err := o.serviceRoutes(cmd, args[0])
			if err != nil {
				return err
			}
			if r.output == "json" || r.output == "yaml" {
				return printObject(routes, "ServiceRoutes", r.output, o.streams.Out)
			}
			return printRoutes(o.streams.Out, routes, r.output == "wide")
		},
	}
	cmd.Flags().StringVarP(&r.output, "output", "o", "", "wide, json or yaml")
	cobra.CheckErr(cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]cobra.Completion{"wide", "json", "yaml"}, cobra.ShellCompDirectiveNoFileComp)))
	return cmd
}

// serviceRoutes gets the ServiceRoutes of service in the namespace of -n.
func (o *options) serviceRoutes(cmd *cobra.Command, service string) (*v1alpha1.ServiceRoutes, error) {
	client, namespace, err := o.topologyIn()
	if err != nil {
		return nil, err
	}
	routes, err := client.TopologyV1alpha1().ServiceRoutes(namespace).Get(cmd.Context(), service, metav1.GetOptions{})
	if err != nil {
		return nil, apiError(err, client.Discovery(), "ServiceRoutes")
	}
	if routes.Namespace == "" {
		routes.Namespace = namespace
	}
	return routes, nil
}

func printRoutes(out io.Writer, routes *v1alpha1.ServiceRoutes, wide bool) error {
	fmt.Fprintf(out, "Service %s/%s: %s\n", routes.Namespace, routes.Name, routesSummary(routes))
	w := printers.GetNewTabWriter(out)
	header := "GROUP\tNODES\tROUTE\tTIER\tREADY"
	if wide {
		header += "\tSAMPLE NODES"
	}
	fmt.Fprintln(w, header)
	for _, g := range sortedGroups(routes) {
		row := fmt.Sprintf("%s\t%d\t%s\t%s\t%d", groupName(routes.Keys, g.Labels, wide), g.Nodes, g.Route, chosenTier(g), g.ReadyEndpoints)
		if wide {
			row += "\t" + sampleNodes(g)
		}
		fmt.Fprintln(w, row)
	}
	return w.Flush()
}

// routesSummary sums up the routes above the table and under the map's title.
func routesSummary(routes *v1alpha1.ServiceRoutes) string {
	rule := routes.Rule
	if rule == "" {
		rule = "none"
	}
	keys := strings.Join(routes.Keys, ",")
	if keys == "" {
		keys = "<none>"
	}
	return fmt.Sprintf("rule %s (%s), keys %s; %d nodes; %d/%d endpoints ready",
		rule, routes.Mode, keys, routes.Nodes, routes.ReadyEndpoints, routes.TotalEndpoints)
}

// sortedGroups orders the groups by their values of the rule's keys, in the
// keys' order, so that the output does not depend on the server's order.
func sortedGroups(routes *v1alpha1.ServiceRoutes) []v1alpha1.RouteGroup {
	groups := slices.Clone(routes.Groups)
	slices.SortStableFunc(groups, func(a, b v1alpha1.RouteGroup) int {
		if c := strings.Compare(labelList(a.Labels, routes.Keys), labelList(b.Labels, routes.Keys)); c != 0 {
			return c
		}
		return strings.Compare(a.Route, b.Route)
	})
	return groups
}

// groupName is the group's value of the first of keys it has, key=value;
// with all, every key=value.
func groupName(keys []string, labels map[string]string, all bool) string {
	if all {
		return labelList(labels, keys)
	}
	for _, key := range keys {
		if value, ok := labels[key]; ok {
			return key + "=" + value
		}
	}
	return labelList(labels, keys)
}

// labelList is labels as k=v,k=v: first those of keys in their order,
// then any other sorted, and "<none>" for no labels.
func labelList(labels map[string]string, keys []string) string {
	if len(labels) == 0 {
		return "<none>"
	}
	rest := make([]string, 0, len(labels))
	for key := range labels {
		if !slices.Contains(keys, key) {
			rest = append(rest, key)
		}
	}
	slices.Sort(rest)
	var pairs []string
	for _, key := range append(slices.Clone(keys), rest...) {
		if value, ok := labels[key]; ok {
			pairs = append(pairs, key+"="+value)
		}
	}
	return strings.Join(pairs, ",")
}

// chosenTier is the tier the group's nodes route to. A chosen tier's value
// is empty only for "*" and for a same-node key (kubernetes.io/hostname,
// say), whose value is each node's own: a node is never in a tier of a
// label it lacks.
func chosenTier(g v1alpha1.RouteGroup) string {
	switch {
	case g.ChosenKey == "":
		return "-"
	case g.ChosenKey != "*" && g.ChosenValue == "":
		return g.ChosenKey + "=<own node>"
	}
	return tierName(g.ChosenKey, g.ChosenValue)
}

func sampleNodes(g v1alpha1.RouteGroup) string {
	names := strings.Join(g.SampleNodes, ",")
	if more := int(g.Nodes) - len(g.SampleNodes); more > 0 {
		names += fmt.Sprintf(" (+%d)", more)
	}
	return names
}
