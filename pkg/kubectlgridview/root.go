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

// Package kubectlgridview is the kubectl plugin `kubectl gridview`: it asks
// gridview-apiserver why a node routes a Service where it does
// (TopologyReview) and where every group of nodes routes it (ServiceRoutes),
// and prints the answers as text, tables or a map.
package kubectlgridview

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/gridview/gridview/generated/clientset/versioned"
)

// options is what every subcommand shares: kubectl's connection flags and
// the clients built from them, which tests replace with fakes.
type options struct {
	configFlags *genericclioptions.ConfigFlags
	streams     genericiooptions.IOStreams
	topology    func() (versioned.Interface, error)
	// core completes names; its typed client alone, not the whole
	// clientset, keeps the plugin's binary small.
	core func() (corev1client.CoreV1Interface, error)
}

// NewCommand returns the root command of kubectl-gridview.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{configFlags: genericclioptions.NewConfigFlags(true), streams: streams}
	o.topology = clientOf(o.configFlags, func(c *rest.Config) (versioned.Interface, error) { return versioned.NewForConfig(c) })
	o.core = clientOf(o.configFlags, func(c *rest.Config) (corev1client.CoreV1Interface, error) { return corev1client.NewForConfig(c) })
	return newRootCommand(o)
}

// clientOf returns a function that builds a client with newClient from
// kubectl's connection flags as they are when it is called, after parsing.
func clientOf[T any](flags *genericclioptions.ConfigFlags, newClient func(*rest.Config) (T, error)) func() (T, error) {
	return func() (T, error) {
		config, err := flags.ToRESTConfig()
		if err != nil {
			var none T
			return none, err
		}
		return newClient(config)
	}
}

func newRootCommand(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kubectl-gridview",
		Short: "Explain and map how gridview routes a Service's traffic",
		Long: `kubectl gridview asks gridview-apiserver (topology.gridview.io/v1alpha1) why a
node routes a Service where it does, and where every group of nodes routes it.

  explain NODE SERVICE   why NODE routes SERVICE's traffic where it does (what-ifs: --label, --unready)
  routes SERVICE         one row per group of nodes that route SERVICE alike
  map SERVICE -o svg     a picture of the groups and where their traffic goes (svg, dot or html)
  migrate superedge      hand SuperEdge's ServiceGrids and their Services over to gridview
                         (a dry run unless --apply)

explain, routes and map are about one Service in one namespace (-n, else the
context's), so they take no -A/--all-namespaces; migrate takes -n or -A.
Connection flags (--kubeconfig, --context, --server, ...) work as kubectl's.

Completion: "kubectl gridview completion bash" writes a script for the
kubectl-gridview binary; for "kubectl gridview <TAB>" (kubectl 1.26+), link
kubectl_complete-gridview to kubectl-gridview on PATH:
  ln -s kubectl-gridview "$(dirname "$(command -v kubectl-gridview)")/kubectl_complete-gridview"`,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl gridview"},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetIn(o.streams.In)
	cmd.SetOut(o.streams.Out)
	cmd.SetErr(o.streams.ErrOut)
	o.configFlags.AddFlags(cmd.PersistentFlags())
	cmd.AddCommand(newExplainCommand(o), newRoutesCommand(o), newMapCommand(o), newMigrateCommand(o))
	return cmd
}

// completionExecutable is what kubectl (1.26+) runs to complete the words
// after "kubectl gridview", with those words as arguments.
const completionExecutable = "kubectl_complete-gridview"

// Args are the arguments to run the command with, given the binary's name
// argv0: run as completionExecutable, it completes the arguments as cobra's
// __complete does, so that a link of that name to kubectl-gridview serves.
func Args(argv0 string, args []string) []string {
	if filepath.Base(argv0) == completionExecutable {
		return append([]string{cobra.ShellCompRequestCmd}, args...)
	}
	return args
}

// topologyIn is the topology client and the namespace of -n.
func (o *options) topologyIn() (versioned.Interface, string, error) {
	namespace, err := o.namespace()
	if err != nil {
		return nil, "", err
	}
	client, err := o.topology()
	return client, namespace, err
}

// namespace is -n, else the kubeconfig context's namespace, else "default".
func (o *options) namespace() (string, error) {
	namespace, _, err := o.configFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("reading the namespace from the kubeconfig: %w", err)
	}
	return namespace, nil
}
