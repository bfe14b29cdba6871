{{/*
Chart name, cut to 63 characters (a label value).
*/}}
{{- define "iotbench.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified release name. Cut to 52 characters so that "<fullname>-collector"
(a Service name, a DNS-1035 label) and "<fullname>-worker" (a Job name, which
Kubernetes copies into a pod label) stay within 63 characters.
*/}}
{{- define "iotbench.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The name of one run's objects: the release's, and in a detached release (which holds several runs)
the release's with the run's index (cut so that "-collector" still fits 63 characters).
*/}}
{{- define "iotbench.runName" -}}
{{- if hasKey .Values "runIndex" }}
{{- printf "%s-%d" (include "iotbench.fullname" . | trunc 48 | trimSuffix "-") (int .Values.runIndex) }}
{{- else }}
{{- include "iotbench.fullname" . }}
{{- end }}
{{- end }}

{{- define "iotbench.collectorName" -}}
{{- printf "%s-collector" (include "iotbench.runName" .) }}
{{- end }}

{{- define "iotbench.workerName" -}}
{{- printf "%s-worker" (include "iotbench.runName" .) }}
{{- end }}

{{- define "iotbench.specName" -}}
{{- printf "%s-spec" (include "iotbench.runName" .) }}
{{- end }}

{{- define "iotbench.conductorName" -}}
{{- printf "%s-conductor" (include "iotbench.fullname" .) }}
{{- end }}

{{- define "iotbench.reportsName" -}}
{{- printf "%s-reports" (include "iotbench.fullname" .) }}
{{- end }}

{{/*
Renders the named template once for the release's run, or, in a detached release, once per run
(each with its own context: the root's values with that run's index, id, worker counts and spec).
include with (dict "root" $ "template" NAME).
*/}}
{{- define "iotbench.perRun" -}}
{{- $root := .root }}
{{- if $root.Values.detached.enabled }}
{{- range $index, $run := $root.Values.detached.runs }}
{{- $values := merge (dict "runIndex" $index "runId" $run.runId "workers" (int $run.workers) "queryWorkers" (int ($run.queryWorkers | default 0)) "spec" $run.spec) (deepCopy $root.Values) }}
---
{{ include $.template (dict "Values" $values "Release" $root.Release "Chart" $root.Chart) }}
{{- end }}
{{- else }}
{{ include .template $root }}
{{- end }}
{{- end }}

{{/*
Name of the Secret whose keys become environment variables of both roles,
or "" when the run has no credentials.
*/}}
{{- define "iotbench.secretName" -}}
{{- if .Values.existingSecret }}
{{- .Values.existingSecret }}
{{- else if .Values.secretEnv }}
{{- printf "%s-env" (include "iotbench.fullname" .) }}
{{- end }}
{{- end }}

{{- define "iotbench.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Selector labels: stable for the life of a release.
*/}}
{{- define "iotbench.selectorLabels" -}}
app.kubernetes.io/name: {{ include "iotbench.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Labels put on every object (without component).
*/}}
{{- define "iotbench.labels" -}}
helm.sh/chart: {{ include "iotbench.chart" . }}
{{ include "iotbench.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: iotdb-bench
iotdb-bench/run-id: {{ .Values.runId | quote }}
{{- end }}

{{/*
Labels of one component: include with (dict "ctx" $ "component" "collector").
*/}}
{{- define "iotbench.componentLabels" -}}
{{ include "iotbench.labels" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "iotbench.componentSelectorLabels" -}}
{{ include "iotbench.selectorLabels" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- if hasKey .ctx.Values "runIndex" }}
iotdb-bench/run-id: {{ .ctx.Values.runId | quote }}
{{- end }}
{{- end }}

{{- define "iotbench.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/*
Pod-level security context: satisfies the "restricted" Pod Security Standard.
*/}}
{{- define "iotbench.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "iotbench.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
privileged: false
capabilities:
  drop:
    - ALL
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/*
Environment shared by both roles: the spec path, then the user's extra variables.
*/}}
{{- define "iotbench.commonEnv" -}}
- name: IOTBENCH_SPEC
  value: /etc/iotbench/spec.json
- name: IOTBENCH_RUN_ID
  value: {{ .Values.runId | quote }}
- name: PYTHONUNBUFFERED
  value: "1"
- name: PYTHONDONTWRITEBYTECODE
  value: "1"
- name: HOME
  value: /tmp
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "iotbench.envFrom" -}}
{{- $secret := include "iotbench.secretName" . -}}
{{- if $secret -}}
envFrom:
  - secretRef:
      name: {{ $secret }}
{{- end -}}
{{- end }}

{{- define "iotbench.volumes" -}}
- name: spec
  configMap:
    name: {{ include "iotbench.specName" . }}
- name: tmp
  emptyDir:
    sizeLimit: {{ .Values.tmpSizeLimit }}
{{- end }}

{{- define "iotbench.volumeMounts" -}}
- name: spec
  mountPath: /etc/iotbench
  readOnly: true
- name: tmp
  mountPath: /tmp
{{- end }}

{{/*
Affinity of one role (include with .Values.collector or .Values.worker), as YAML: the role's own
affinity, plus, with avoidDatabaseNodes.enabled, a required pod anti-affinity per hostname to the
database pods.
*/}}
{{- define "iotbench.affinity" -}}
{{- $affinity := deepCopy (.affinity | default dict) }}
{{- if .avoidDatabaseNodes.enabled }}
{{- $dbLabels := .avoidDatabaseNodes.labelSelector | default (dict "iotdb-bench/role" "database") }}
{{- $term := dict "topologyKey" "kubernetes.io/hostname" "labelSelector" (dict "matchLabels" $dbLabels) }}
{{- if .avoidDatabaseNodes.namespaces }}
{{- $_ := set $term "namespaces" .avoidDatabaseNodes.namespaces }}
{{- else }}
{{- /* an empty namespaceSelector matches the database pods in every namespace */}}
{{- $_ := set $term "namespaceSelector" dict }}
{{- end }}
{{- $anti := get $affinity "podAntiAffinity" | default dict }}
{{- $required := get $anti "requiredDuringSchedulingIgnoredDuringExecution" | default list }}
{{- $_ := set $anti "requiredDuringSchedulingIgnoredDuringExecution" (append $required $term) }}
{{- $_ := set $affinity "podAntiAffinity" $anti }}
{{- end }}
{{- if $affinity }}
{{- toYaml $affinity }}
{{- end }}
{{- end }}

{{/*
Checks of combinations the schema cannot express. Rendered by every template
that depends on them, so a bad combination fails the whole install.
*/}}
{{- define "iotbench.validate" -}}
{{- if and .Values.existingSecret .Values.secretEnv }}
{{- fail "set either existingSecret or secretEnv, not both" }}
{{- end }}
{{- $spec := fromJson .Values.spec }}
{{- if and (hasKey $spec "Error") (eq (len $spec) 1) }}
{{- fail (printf "value spec must be a JSON object: %s" (get $spec "Error")) }}
{{- end }}
{{- end }}

{{/*
A detached release's plan for its conductor, as JSON: the namespace, the reports ConfigMap, each
run's --timeout, and per run (in order) its id, its Jobs, its spec ConfigMap, its collector's URL and
the CLI's record of it (label, worker count, ...).
*/}}
{{- define "iotbench.detachedRuns" -}}
{{- $root := . }}
{{- $runs := list }}
{{- range $index, $run := .Values.detached.runs }}
{{- $ctx := dict "Values" (merge (dict "runIndex" $index "runId" $run.runId) (pick $root.Values "fullnameOverride" "nameOverride")) "Release" $root.Release "Chart" $root.Chart }}
{{- $collector := include "iotbench.collectorName" $ctx }}
{{- $runs = append $runs (dict "runId" $run.runId "record" ($run.record | default dict) "collectorJob" $collector "workerJob" (include "iotbench.workerName" $ctx) "specConfigMap" (include "iotbench.specName" $ctx) "collectorUrl" (printf "http://%s:8080" $collector)) }}
{{- end }}
{{- dict "namespace" .Release.Namespace "reports" (include "iotbench.reportsName" .) "runTimeoutSeconds" .Values.detached.runTimeoutSeconds "runs" $runs | toJson }}
{{- end }}
