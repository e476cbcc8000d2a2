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

package manifests

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// manifest is one object that `kubectl apply` would send: from a rendered
// kustomization, or from a plain manifest file outside any.
type manifest struct {
	// source is the kustomization directory or file, relative to artifacts/.
	source string
	raw    map[string]any
	// obj is nil for kinds client-go does not know, such as APIService.
	obj runtime.Object
}

func (m manifest) String() string {
	kind, _ := m.raw["kind"].(string)
	metadata, _ := m.raw["metadata"].(map[string]any)
	name, _ := metadata["name"].(string)
	return m.source + ": " + kind + "/" + name
}

// allManifests renders every kustomization under artifacts/ (the install,
// its overlays, the wrapper) and reads every plain manifest, so that a check
// covers whatever a user may apply.
var allManifests = sync.OnceValues(func() ([]manifest, error) {
	root := filepath.Join("..", "..", "artifacts")
	var manifests []manifest
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		source, _ := filepath.Rel(root, path)
		var data []byte
		switch {
		case d.IsDir():
			if _, err := os.Stat(filepath.Join(path, "kustomization.yaml")); err != nil {
				return nil
			}
			if data, err = kustomize(path); err != nil {
				return err
			}
		case strings.HasSuffix(path, ".yaml"):
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), "kustomization.yaml")); err == nil {
				return nil // part of its directory's rendering
			}
			if data, err = os.ReadFile(path); err != nil {
				return err
			}
		default:
			return nil
		}
		decoded, err := decode(source, data)
		manifests = append(manifests, decoded...)
		return err
	})
	return manifests, err
})

func manifests(t *testing.T) []manifest {
	t.Helper()
	m, err := allManifests()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// kustomize renders dir with the kubectl of `make tools`, or one on PATH.
func kustomize(dir string) ([]byte, error) {
	kubectl := ""
	for _, binDir := range []string{os.Getenv("GRIDVIEW_BIN_DIR"), filepath.Join("..", "..", "_output", "bin")} {
		if info, err := os.Stat(filepath.Join(binDir, "kubectl")); binDir != "" && err == nil && info.Mode().IsRegular() {
			kubectl = filepath.Join(binDir, "kubectl")
			break
		}
	}
	if kubectl == "" {
		var err error
		if kubectl, err = exec.LookPath("kubectl"); err != nil {
			return nil, errors.New("rendering the kustomizations needs kubectl: run `make tools`")
		}
	}
	var stderr bytes.Buffer
	cmd := exec.Command(kubectl, "kustomize", dir)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kubectl kustomize %s: %w: %s", dir, err, stderr.String())
	}
	return out, nil
}

func decode(source string, data []byte) ([]manifest, error) {
	var manifests []manifest
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return manifests, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		m := manifest{source: source}
		if err := yaml.Unmarshal(doc, &m.raw); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		if len(m.raw) == 0 {
			continue
		}
		m.obj, _, _ = scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		manifests = append(manifests, m)
	}
}
