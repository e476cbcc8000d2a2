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

package wrapper

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// NewCommand returns the gridview-wrapper command. Errors are returned, not
// printed: main prints them as one line.
func NewCommand(ctx context.Context) *cobra.Command {
	o := NewOptions()
	cmd := &cobra.Command{
		Use:   "gridview-wrapper",
		Short: "Serve kube-proxy this node's topology-pruned view of the cluster",
		Long: `gridview-wrapper runs on every edge node. It reads only this node's NodeEndpoints from
gridview (plus Services, its Node and ServiceCIDRs) and serves kube-proxy the EndpointSlices,
Endpoints, Services, Node and ServiceCIDRs it lists and watches, as kube-apiserver would. It keeps
its last state on disk and keeps serving it through WAN outages and its own restarts.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.ApplyLogging(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.SetContext(ctx)
	cmd.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return fmt.Errorf("%w (see %s --help)", err, cmd.CommandPath())
	})
	o.AddFlags(cmd.Flags())
	cmd.Flags().SetNormalizeFunc(pflag.CommandLine.GetNormalizeFunc())
	return cmd
}
