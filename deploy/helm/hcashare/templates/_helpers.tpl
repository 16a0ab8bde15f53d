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

{{/* The injector's objects' name: <fullname>-injector. */}}
{{- define "hcashare.injector.name" -}}
{{- printf "%s-injector" (include "hcashare.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The injector's labels: its own app name (the DaemonSet's selector must not match its
pods), part of hcashare. */}}
{{- define "hcashare.injector.labels" -}}
app.kubernetes.io/name: hcashare-injector
app.kubernetes.io/part-of: hcashare
app.kubernetes.io/component: webhook
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The Secret with the injector's serving certificate (tls.crt, tls.key). */}}
{{- define "hcashare.injector.secretName" -}}
{{- if eq .Values.injector.certs.mode "secret" -}}
{{- required "injector.certs.secretName is required with injector.certs.mode=secret" .Values.injector.certs.secretName -}}
{{- else -}}
{{- printf "%s-tls" (include "hcashare.injector.name" .) -}}
{{- end -}}
{{- end -}}
