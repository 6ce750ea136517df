{{- define "common.deployment" -}}
{{- $root := .root -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "common.fullname" $root }}
  labels:
    {{- include "common.labels" $root | nindent 4 }}
spec:
  replicas: {{ $root.Values.replicaCount }}
  selector:
    matchLabels:
      {{- include "common.selectorLabels" $root | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "common.selectorLabels" $root | nindent 8 }}
    spec:
      containers:
        - name: {{ $root.Chart.Name }}
          image: {{ printf "%s:%s" $root.Values.image.repository $root.Values.image.tag | quote }}
          ports:
            - containerPort: {{ .port }}
{{- end -}}
