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

package localcluster

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Client rate limits well above client-go's defaults: tests create many
// objects quickly and nothing else shares this control plane.
const (
	clientQPS   = 100
	clientBurst = 200
)

// writeAdminKubeconfig writes WorkDir/admin.kubeconfig (system:masters) and
// loads AdminConfig from it, so the file tests and kubectl use is the one
// that was proven to work.
func (c *Cluster) writeAdminKubeconfig() error {
	certData, err := os.ReadFile(c.pki.AdminCert)
	if err != nil {
		return fmt.Errorf("reading admin certificate: %w", err)
	}
	keyData, err := os.ReadFile(c.pki.AdminKey)
	if err != nil {
		return fmt.Errorf("reading admin key: %w", err)
	}
	path := filepath.Join(c.opts.WorkDir, "admin.kubeconfig")
	if err := c.writeKubeconfig(path, "admin", &clientcmdapi.AuthInfo{
		ClientCertificateData: certData,
		ClientKeyData:         keyData,
	}); err != nil {
		return err
	}
	cfg, err := loadKubeconfig(path)
	if err != nil {
		return err
	}
	c.AdminKubeconfig, c.AdminConfig = path, cfg
	return nil
}

// WriteTokenKubeconfig writes a kubeconfig at path that reaches this
// cluster's kube-apiserver with a bearer token, e.g. a ServiceAccount's.
func (c *Cluster) WriteTokenKubeconfig(path, user, token string) error {
	return c.writeKubeconfig(path, user, &clientcmdapi.AuthInfo{Token: token})
}

// WriteClientCertKubeconfig writes a kubeconfig that authenticates with a
// client certificate of the cluster CA for commonName in organizations, as
// kubelet's does for a node (CN=system:node:<name>, O=system:nodes).
func (c *Cluster) WriteClientCertKubeconfig(path, commonName string, organizations ...string) error {
	der, key, err := c.pki.clusterCA.sign(certSpec{commonName: commonName, organizations: organizations})
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("encoding the key of %s: %w", commonName, err)
	}
	return c.writeKubeconfig(path, commonName, &clientcmdapi.AuthInfo{
		ClientCertificateData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		ClientKeyData:         pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	})
}

func (c *Cluster) writeKubeconfig(path, user string, auth *clientcmdapi.AuthInfo) error {
	caData, err := os.ReadFile(c.pki.CACert)
	if err != nil {
		return fmt.Errorf("reading cluster CA: %w", err)
	}
	const name = "gridview-local"
	config := clientcmdapi.NewConfig()
	config.Clusters[name] = &clientcmdapi.Cluster{Server: c.ServerURL, CertificateAuthorityData: caData}
	config.AuthInfos[user] = auth
	config.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: user}
	config.CurrentContext = name
	if err := clientcmd.WriteToFile(*config, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

func loadKubeconfig(path string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", path, err)
	}
	cfg.QPS, cfg.Burst = clientQPS, clientBurst
	return cfg, nil
}
