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
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/gridview/gridview/generated/clientset/versioned"
)

type migrateOptions struct {
	*options
	// dynamic reads and deletes SuperEdge's ServiceGrids, whose types the
	// plugin does not import; tests replace it with a fake.
	dynamic func() (dynamic.Interface, error)
	// authorization asks whether the user may make the writes of an
	// adoption, before any of them; tests replace it with a fake.
	authorization func() (authorizationv1client.AuthorizationV1Interface, error)
	allNamespaces bool
	apply         bool
	timeout       time.Duration
	// poll is how often a handover looks for gridview's adoption.
	poll time.Duration
}

func newMigrateCommand(o *options) *cobra.Command {
	m := &migrateOptions{options: o, poll: 250 * time.Millisecond}
	m.dynamic = clientOf(o.configFlags, func(c *rest.Config) (dynamic.Interface, error) { return dynamic.NewForConfig(c) })
	m.authorization = clientOf(o.configFlags, func(c *rest.Config) (authorizationv1client.AuthorizationV1Interface, error) {
		return authorizationv1client.NewForConfig(c)
	})
	return migrateCommand(m)
}

func migrateCommand(m *migrateOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Move ServiceGrids from another controller to gridview",
	}
	superedge := &cobra.Command{
		Use:   "superedge",
		Short: "Move SuperEdge's ServiceGrids (superedge.io/v1) and their Services to gridview",
		Long: `For each superedge.io/v1 ServiceGrid: create the topology.gridview.io/v1alpha1
ServiceGrid of the same name, namespace, labels, gridUniqKey and template
(fallback None, SuperEdge's behaviour), with the labels and annotations users
put on the Service, which gridview then renders on it; hand its Service <name>-svc over to it
without recreating it (same uid and clusterIP, endpoints kept), through
gridview's adoption, so that gridview-apiserver checks that you may update and
patch that Service; then delete SuperEdge's ServiceGrid with
propagationPolicy=Orphan. Before it changes anything, it asks whether
gridview-apiserver will admit that adoption (access reviews of your rights, a
server-side dry run of the Service as gridview takes it over); should the
adoption fail all the same, SuperEdge's controller reference is put back.

Without --apply it only prints what it would do, refusals included. Stop
SuperEdge's application-grid-controller first: it would take the Service back.
Every step looks at the cluster first, so a second run, or a run after an
interruption, does only what is left. A ServiceGrid that cannot be handed over
is refused with the reason, the others are migrated, and the command fails at
the end.`,
		Example: `  kubectl gridview migrate superedge -n demo
  kubectl gridview migrate superedge -A --apply`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return m.run(cmd.Context())
		},
	}
	superedge.Flags().BoolVarP(&m.allNamespaces, "all-namespaces", "A", false, "migrate the ServiceGrids of every namespace")
	superedge.Flags().BoolVar(&m.apply, "apply", false, "make the changes; without it, print what would be done")
	superedge.Flags().DurationVar(&m.timeout, "timeout", time.Minute, "how long to wait for gridview to adopt each Service")
	cmd.AddCommand(superedge)
	return cmd
}

// migrator holds one run's clients.
type migrator struct {
	*migrateOptions
	gridview      versioned.Interface
	core          corev1client.CoreV1Interface
	superedge     dynamic.Interface
	authorization authorizationv1client.AuthorizationV1Interface
}

// refusal is a ServiceGrid that cannot be handed over: reported, and the
// run goes on with the next.
type refusal struct{ reason string }

func (r *refusal) Error() string { return r.reason }

func refuse(format string, args ...any) error {
	return &refusal{reason: fmt.Sprintf(format, args...)}
}

func (m *migrateOptions) run(ctx context.Context) error {
	namespace := metav1.NamespaceAll
	if !m.allNamespaces {
		var err error
		if namespace, err = m.namespace(); err != nil {
			return err
		}
	}
	mg := &migrator{migrateOptions: m}
	var err error
	if mg.gridview, err = m.topology(); err != nil {
		return err
	}
	if mg.core, err = m.core(); err != nil {
		return err
	}
	if mg.superedge, err = m.dynamic(); err != nil {
		return err
	}
	if mg.authorization, err = m.authorization(); err != nil {
		return err
	}
	grids, err := mg.list(ctx, namespace)
	if apierrors.IsNotFound(err) {
		fmt.Fprintf(m.streams.Out, "%s ServiceGrids are not served (SuperEdge's CRD is not installed): nothing to do\n", superedgeVersion)
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing %s ServiceGrids: %w", superedgeVersion, err)
	}
	if len(grids) == 0 {
		where := "in namespace " + namespace
		if m.allNamespaces {
			where = "in any namespace"
		}
		fmt.Fprintf(m.streams.Out, "No %s ServiceGrids %s: nothing to do\n", superedgeVersion, where)
		return nil
	}
	var failed []string
	for _, grid := range grids {
		p := &printer{out: m.streams.Out, prefix: grid.namespace + "/" + grid.name + ": "}
		err := mg.migrate(ctx, grid, p)
		if refused := (*refusal)(nil); errors.As(err, &refused) {
			p.line("refused: %s", refused.reason)
		} else if err != nil {
			p.line("failed: %v", err)
		}
		if err != nil {
			failed = append(failed, grid.namespace+"/"+grid.name)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d SuperEdge ServiceGrids not migrated: %v", len(failed), len(grids), failed)
	}
	if !m.apply {
		fmt.Fprintln(m.streams.Out, "Dry run: nothing changed; run again with --apply to migrate")
	}
	return nil
}

// printer writes a ServiceGrid's lines, one per step.
type printer struct {
	out    io.Writer
	prefix string
}

func (p *printer) line(format string, args ...any) {
	fmt.Fprintf(p.out, p.prefix+format+"\n", args...)
}
