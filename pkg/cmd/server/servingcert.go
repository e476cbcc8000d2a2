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

package server

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
	"github.com/gridview/gridview/pkg/controller/servingcert"
)

// serviceName is the Service of artifacts/deploy that the APIService points
// at; the aggregator verifies the serving certificate for its DNS names.
const serviceName = "gridview-apiserver"

// kubeVersion is the form of an API version such as v1, v1beta2 or
// v1alpha1.
var kubeVersion = regexp.MustCompile(`^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$`)

// serviceDNSNames are the names a serving certificate must carry for the
// aggregator to reach gridview-apiserver through its Service in namespace.
func serviceDNSNames(namespace string) []string {
	svc := serviceName + "." + namespace + ".svc"
	return []string{svc, svc + ".cluster.local"}
}

func (o *Options) addServingCertFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ServingCertSecret, "serving-cert-secret", o.ServingCertSecret,
		"<namespace>/<name> of a Secret in which gridview-apiserver keeps a CA of its own and the serving certificate it issues "+
			"for the Service "+serviceName+" of that namespace, creating and renewing both before they expire and serving the "+
			"Secret's certificate without a restart. Excludes --tls-cert-file and --tls-private-key-file.")
	fs.StringVar(&o.APIServiceName, "apiservice-name", o.APIServiceName,
		"APIService whose spec.caBundle gridview-apiserver keeps equal to the CA of --serving-cert-secret, "+
			"e.g. v1alpha1.topology.gridview.io. Needs --serving-cert-secret.")
}

// validateServingCert reports the flags of the managed serving certificate
// that are malformed or contradict others.
func (o *Options) validateServingCert() []error {
	var errs []error
	if o.ServingCertSecret != "" {
		namespace, name, ok := strings.Cut(o.ServingCertSecret, "/")
		if !ok || len(validation.IsDNS1123Label(namespace)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
			errs = append(errs, fmt.Errorf("--serving-cert-secret %q must be <namespace>/<name> of a Secret", o.ServingCertSecret))
		}
		if key := o.RecommendedOptions.SecureServing.ServerCert.CertKey; key.CertFile != "" || key.KeyFile != "" {
			errs = append(errs, errors.New("--serving-cert-secret excludes --tls-cert-file and --tls-private-key-file: "+
				"serve either the certificate given or the one gridview-apiserver manages"))
		}
	}
	if o.APIServiceName != "" && o.ServingCertSecret == "" {
		errs = append(errs, errors.New("--apiservice-name needs --serving-cert-secret: the caBundle it sets is the CA of that Secret"))
	}
	// The aggregator names every APIService <version>.<group>, and proxies
	// to gridview-apiserver only those of its group: another name would be
	// a typo or the APIService of another server, whose trust is not ours
	// to set.
	if version, group, _ := strings.Cut(o.APIServiceName, "."); o.APIServiceName != "" &&
		(!kubeVersion.MatchString(version) || group != v1alpha1.GroupName) {
		errs = append(errs, fmt.Errorf("--apiservice-name %q must be <version>.<group> of an APIService of gridview's group, such as v1alpha1.%s",
			o.APIServiceName, v1alpha1.GroupName))
	}
	return errs
}

// servingCertController manages the certificate of --serving-cert-secret
// through the cluster's kube-apiserver.
func (o *Options) servingCertController(client *restclient.Config) (*servingcert.Controller, error) {
	if client == nil {
		return nil, errors.New("--serving-cert-secret needs a connection to the cluster (--kubeconfig or in-cluster)")
	}
	kube, err := kubernetes.NewForConfig(client)
	if err != nil {
		return nil, fmt.Errorf("creating the Kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(client)
	if err != nil {
		return nil, fmt.Errorf("creating the dynamic client: %w", err)
	}
	namespace, name, _ := strings.Cut(o.ServingCertSecret, "/")
	return servingcert.NewController(kube, dyn, servingcert.Config{
		SecretNamespace: namespace,
		SecretName:      name,
		Hosts:           serviceDNSNames(namespace),
		APIService:      o.APIServiceName,
	}), nil
}
