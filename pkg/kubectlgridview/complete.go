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
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// completeService completes a command's only argument with the names of
// the Services in the namespace of -n.
func (o *options) completeService(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return o.complete(cmd, false, toComplete)
}

// completeNodeThenService completes explain's NODE, then its SERVICE.
func (o *options) completeNodeThenService(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 1 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return o.complete(cmd, len(args) == 0, toComplete)
}

// complete lists the names of nodes, or of the Services of the namespace,
// that start with prefix. A failure only means no completions: the shell
// has nowhere to show an error.
func (o *options) complete(cmd *cobra.Command, nodes bool, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	client, err := o.core()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var names []string
	if nodes {
		list, err := client.Nodes().List(cmd.Context(), metav1.ListOptions{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		for _, node := range list.Items {
			names = append(names, node.Name)
		}
	} else {
		namespace, err := o.namespace()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		list, err := client.Services(namespace).List(cmd.Context(), metav1.ListOptions{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		for _, service := range list.Items {
			names = append(names, service.Name)
		}
	}
	var completions []cobra.Completion
	for _, name := range names {
		if strings.HasPrefix(name, prefix) {
			completions = append(completions, name)
		}
	}
	return completions, cobra.ShellCompDirectiveNoFileComp
}
