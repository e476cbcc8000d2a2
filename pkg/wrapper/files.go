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
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"k8s.io/klog/v2"
)

// replaceFile writes dir/name through a temporary file renamed over it once
// written and synced, so that a crash or a power loss leaves the old file or
// the whole new one, never a part. The temporary file is named name.* and
// created with perm from the start: a secret is never readable by others,
// not even before the rename.
func replaceFile(dir, name string, perm os.FileMode, write func(*os.File) error) error {
	tmp, err := os.CreateTemp(dir, name+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	err = tmp.Chmod(perm)
	if err == nil {
		err = write(tmp)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, name))
	}
	if err == nil {
		err = syncDir(dir)
	}
	return err
}

// removeStaleTemporaries removes the temporary files a killed process left
// while writing one of names in dir (replaceFile): nothing else removes them
// from the node's disk. Only before the first write: each file has one
// writer.
func removeStaleTemporaries(dir string, names ...string) {
	for _, name := range names {
		stale, _ := filepath.Glob(filepath.Join(dir, name+".*"))
		for _, file := range stale {
			if err := os.Remove(file); err != nil {
				klog.ErrorS(err, "Cannot remove the temporary file of an unfinished write", "file", file)
			}
		}
	}
}

// syncDir makes a rename into dir durable: without it, a power loss may
// bring back the file the rename replaced. A file system that cannot sync
// a directory has nothing more to make durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		err = nil
	}
	if closeErr := d.Close(); err == nil {
		err = closeErr
	}
	return err
}
