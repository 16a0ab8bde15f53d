{{/* The DaemonSet's name: fullnameOverride, else the release name. */}}
{{- define "hcashare.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels every object carries; the selector uses only app.kubernetes.io/name. */}}
{{- define "hcashare.labels" -}}
app.kubernetes.io/name: hcashare
app.kubernetes.io/component: device-plugin
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The image reference; the tag defaults to the chart's appVersion. */}}
{{- define "hcashare.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
