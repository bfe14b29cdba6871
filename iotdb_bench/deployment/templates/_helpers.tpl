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

{{- define "iotbench.collectorName" -}}
{{- printf "%s-collector" (include "iotbench.fullname" .) }}
{{- end }}

{{- define "iotbench.workerName" -}}
{{- printf "%s-worker" (include "iotbench.fullname" .) }}
{{- end }}

{{- define "iotbench.specName" -}}
{{- printf "%s-spec" (include "iotbench.fullname" .) }}
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
