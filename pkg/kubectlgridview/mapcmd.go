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
	"os"

	"github.com/spf13/cobra"
)

type mapOptions struct {
	*options
	output     string
	outputFile string
}

// mapWriters draws a routeMap in each format of -o.
var mapWriters = map[string]func(io.Writer, routeMap) error{
	"svg":  writeSVG,
	"dot":  writeDOT,
	"html": writeHTML,
}

func newMapCommand(o *options) *cobra.Command {
	m := &mapOptions{options: o}
	cmd := &cobra.Command{
		Use:   "map SERVICE",
		Short: "Draw where every group of nodes routes a Service's traffic (svg, dot or html)",
		Long: fmt.Sprintf(`Map draws the Service's ServiceRoutes: a cell per group of nodes, coloured by
route (local green, fallback-N amber to orange, all blue-grey, none red), in
sections by the target they route to, with a dashed edge from each group that
falls back to the tier it falls back to. Above %d groups, the local and all
groups are counted in one cell per value of the rule's second key (a zone, say),
while every group that falls back or has no endpoint is still drawn.`, summariseAbove),
		Example: `  kubectl gridview map ordered -n demo -o svg > ordered.svg
  kubectl gridview map echo-svc -n demo -o html --output-file echo.html
  kubectl gridview map echo-svc -n demo -o dot | dot -Tpng > echo.png`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: o.completeService,
		RunE: func(cmd *cobra.Command, args []string) error {
			write, ok := mapWriters[m.output]
			if !ok {
				return fmt.Errorf("unsupported output %q: map draws svg, dot or html", m.output)
			}
			routes, err := o.serviceRoutes(cmd, args[0])
			if err != nil {
				return err
			}
			if m.outputFile == "" {
				return write(o.streams.Out, newRouteMap(routes))
			}
			return m.writeFile(write, newRouteMap(routes))
		},
	}
	cmd.Flags().StringVarP(&m.output, "output", "o", "svg", "svg, dot or html")
	cobra.CheckErr(cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]cobra.Completion{"svg", "dot", "html"}, cobra.ShellCompDirectiveNoFileComp)))
	cmd.Flags().StringVar(&m.outputFile, "output-file", "", "write the map to this file instead of stdout")
	return cmd
}

func (m *mapOptions) writeFile(write func(io.Writer, routeMap) error, rm routeMap) error {
	f, err := os.Create(m.outputFile)
	if err != nil {
		return fmt.Errorf("creating the map file: %w", err)
	}
	if err := write(f, rm); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", m.outputFile, err)
	}
	return nil
}
