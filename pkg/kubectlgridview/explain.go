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
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
)

// shownAddresses is how many addresses explain lists before it counts the
// rest: a Service that is not pruned may have thousands.
const shownAddresses = 10

type explainOptions struct {
	*options
	labels  []string
	unready []string
	output  string
}

func newExplainCommand(o *options) *cobra.Command {
	e := &explainOptions{options: o}
	cmd := &cobra.Command{
		Use:   "explain NODE SERVICE",
		Short: "Explain why a node routes a Service's traffic where it does",
		Long: `Explain creates a TopologyReview (never stored) and prints the answer: the rule,
the node's tiers with their ready and total endpoints and how many each needs,
the tier chosen, the addresses and the reason.

What-ifs change nothing in the cluster: --label replaces all the node's labels
with the ones given ("what if this node moved?"), --unready counts a node's
endpoints as not ready ("what if it went down?").`,
		Example: `  kubectl gridview explain edge-3 ordered -n demo
  kubectl gridview explain edge-1 ordered -n demo --label superedge.io/nodeunit=unit-b
  kubectl gridview explain edge-3 ordered -n demo --unready edge-1 --unready edge-2 -o yaml`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: o.completeNodeThenService,
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.run(cmd, args[0], args[1])
		},
	}
	cmd.Flags().StringArrayVar(&e.labels, "label", nil, "what-if: a node label key=value; given at least once, these replace all the node's labels")
	cmd.Flags().StringSliceVar(&e.unready, "unready", nil, "what-if: a node whose endpoints count as not ready (repeat or comma-separate)")
	cmd.Flags().StringVarP(&e.output, "output", "o", "", "yaml or json prints the TopologyReview instead of the explanation")
	cobra.CheckErr(cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]cobra.Completion{"yaml", "json"}, cobra.ShellCompDirectiveNoFileComp)))
	return cmd
}

func (e *explainOptions) run(cmd *cobra.Command, node, service string) error {
	if e.output != "" && e.output != "yaml" && e.output != "json" {
		return fmt.Errorf("unsupported output %q: explain prints text, yaml or json", e.output)
	}
	review, err := e.review(node, service)
	if err != nil {
		return err
	}
	client, namespace, err := e.topologyIn()
	if err != nil {
		return err
	}
	review, err = client.TopologyV1alpha1().TopologyReviews(namespace).Create(cmd.Context(), review, metav1.CreateOptions{})
	if err != nil {
		return apiError(err, client.Discovery(), "TopologyReview")
	}
	if e.output != "" {
		return printObject(review, "TopologyReview", e.output, e.streams.Out)
	}
	return printExplanation(e.streams.Out, namespace, review)
}

// review is the question the flags ask.
func (e *explainOptions) review(node, service string) (*v1alpha1.TopologyReview, error) {
	review := &v1alpha1.TopologyReview{Spec: v1alpha1.TopologyReviewSpec{
		NodeName:     node,
		ServiceName:  service,
		UnreadyNodes: e.unready,
	}}
	for _, label := range e.labels {
		key, value, found := strings.Cut(label, "=")
		if !found || key == "" {
			return nil, fmt.Errorf("--label %q: want key=value", label)
		}
		if review.Spec.NodeLabels == nil {
			review.Spec.NodeLabels = map[string]string{}
		}
		review.Spec.NodeLabels[key] = value
	}
	return review, nil
}

func printExplanation(out io.Writer, namespace string, review *v1alpha1.TopologyReview) error {
	spec, status := review.Spec, review.Status
	w := printers.GetNewTabWriter(out)
	fmt.Fprintf(w, "Node %s, Service %s/%s\n", spec.NodeName, namespace, spec.ServiceName)
	if ifs := whatIf(spec); ifs != "" {
		fmt.Fprintf(w, "What if:\t%s\n", ifs)
	}
	if status.Rule == "" {
		fmt.Fprintf(w, "Rule:\tnone (%s)\n", status.Mode)
	} else {
		fmt.Fprintf(w, "Rule:\t%s (%s)\n", status.Rule, status.Mode)
	}
	for i, tier := range status.Tiers {
		cells := []string{"", tierName(tier.Key, tier.Value), fmt.Sprintf("%d/%d ready", tier.Ready, tier.Total), ""}
		if i == 0 {
			cells[0] = "Tiers:"
		}
		// MinReady 0 (an any-match rule without "*") gates nothing: no "needs 0".
		if tier.MinReady > 0 {
			cells[3] = fmt.Sprintf("needs %d", tier.MinReady)
		}
		if tier.Chosen {
			cells = append(cells, "← chosen")
		}
		// No empty last cell, which the tab writer would pad with spaces.
		if cells[len(cells)-1] == "" {
			cells = cells[:len(cells)-1]
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	fmt.Fprintf(w, "Route:\t%s\n", status.Route)
	fmt.Fprintf(w, "Addresses:\t%s\n", addressList(status.Addresses))
	fmt.Fprintf(w, "Reason:\t%s\n", status.Reason)
	return w.Flush()
}

// whatIf names the what-ifs of spec, so that an answer is not mistaken
// for the cluster's current routing; empty without any.
func whatIf(spec v1alpha1.TopologyReviewSpec) string {
	var ifs []string
	if spec.NodeLabels != nil {
		ifs = append(ifs, "labels "+labelList(spec.NodeLabels, nil))
	}
	if len(spec.UnreadyNodes) > 0 {
		ifs = append(ifs, "unready "+strings.Join(spec.UnreadyNodes, ","))
	}
	return strings.Join(ifs, "; ")
}

func addressList(addresses []string) string {
	switch {
	case len(addresses) == 0:
		return "<none>"
	case len(addresses) <= shownAddresses:
		return strings.Join(addresses, ", ")
	}
	return fmt.Sprintf("%s … %d more", strings.Join(addresses[:shownAddresses], ", "), len(addresses)-shownAddresses)
}
