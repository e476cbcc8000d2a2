{{/*
Copyright 2026 The gridview Authors.
SPDX-License-Identifier: Apache-2.0

Object names are those of artifacts/deploy, not prefixed with the release:
the APIService and the cluster-wide RBAC exist once per cluster, so one
release of this chart per cluster.
*/}}

{{/*
gridview.labels: the labels of artifacts/deploy (app.kubernetes.io/name, and
the component when given), then Helm's. Call with (dict "ctx" $ "component" "apiserver").
*/}}
{{- define "gridview.labels" -}}
app.kubernetes.io/name: gridview
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
{{- end }}

{{/* gridview.image: repository:tag, the tag defaulting to appVersion. Call with (dict "ctx" $ "image" .Values.image). */}}
{{- define "gridview.image" -}}
{{ .image.repository }}:{{ .image.tag | default .ctx.Chart.AppVersion }}
{{- end }}

{{/* gridview.externalEtcd: "true" when ServiceGrids live in an external etcd. */}}
{{- define "gridview.externalEtcd" -}}
{{- if .Values.etcd.external.servers }}true{{ end }}
{{- end }}

{{/* gridview.servingCertSecret: the Secret gridview-apiserver keeps its CA and serving certificate in. */}}
{{- define "gridview.servingCertSecret" -}}
gridview-apiserver-serving-cert
{{- end }}

{{/* gridview.apiServiceName: gridview's APIService. */}}
{{- define "gridview.apiServiceName" -}}
v1alpha1.topology.gridview.io
{{- end }}

{{/* gridview.validate fails the render on values that cannot work. */}}
{{- define "gridview.validate" -}}
{{- if and (gt (int .Values.replicas) 1) (not (include "gridview.externalEtcd" .)) }}
{{- fail (printf "replicas is %d but etcd.external.servers is empty: every replica would run an embedded etcd with ServiceGrids of its own. Set etcd.external.servers (and etcd.external.tlsSecretName) for more than one replica." (int .Values.replicas)) }}
{{- end }}
{{- if lt (int .Values.replicas) 1 }}
{{- fail (printf "replicas is %d, want at least 1" (int .Values.replicas)) }}
{{- end }}
{{- range .Values.etcd.external.servers }}
{{- if not (hasPrefix "https://" .) }}
{{- fail (printf "etcd.external.servers has %s: want https:// URLs, as ServiceGrids travel to etcd over TLS only" .) }}
{{- end }}
{{- end }}
{{- if and (include "gridview.externalEtcd" .) (not .Values.etcd.external.tlsSecretName) }}
{{- fail "etcd.external.servers is set but etcd.external.tlsSecretName is empty: name the Secret with the etcd client certificate (tls.crt, tls.key) and the CA of etcd's serving certificate (ca.crt)" }}
{{- end }}
{{- end }}
