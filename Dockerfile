# syntax=docker/dockerfile:1
#
# deploy-web's image: one static binary (templates, CSS and JS are embedded)
# on distroless static, running as nonroot. No HEALTHCHECK: Kubernetes
# probes /healthz and /readyz (deploy/).
#
# The build step is `make image-binary` (CGO_ENABLED=0, -trimpath,
# -ldflags='-s -w', no VCS stamping, -tags kustomize_disable_go_plugin_support:
# no Go plugin loader in the binary), so the binary it leaves in
# bin/deploy-web-static is the one this image ships.
#
#   docker build -t ghcr.io/hanzoai/deploy-web:0.1.0 .

ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOTOOLCHAIN=local
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# The generated templ code is committed (make check-generated keeps it
# current), so no generate step is needed here.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    go build -tags kustomize_disable_go_plugin_support -trimpath -buildvcs=false -ldflags='-s -w' -o /out/deploy-web ./cmd/deploy-web

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/deploy-web /deploy-web
USER 65532:65532
EXPOSE 8080 9090
ENTRYPOINT ["/deploy-web"]
CMD ["serve"]
