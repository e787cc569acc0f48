#!/bin/sh
# Copies the gateway's run-time tree out of a built checkout: what `node packages/server/dist/main.js`
# and the `tollgate` command load, nothing else. Shared by the Dockerfile and deploy/build-image.sh
# so that both images hold the same files (docs/deploy.md, "Containers").
#
#   sh deploy/assemble-app.sh SRC DEST
#
# SRC has had `npm ci`, `npm run build` and `npm prune --omit=dev`. POSIX sh: the Dockerfile's
# build stage (node:*-slim) has dash, not bash.
set -eu
src=$1
dest=$2
mkdir -p "$dest/packages"
cp -a "$src/package.json" "$src/package-lock.json" "$src/node_modules" "$dest/"
# The workspaces: node_modules/@tollgate/* are links to these. Each one's built output and the
# dependencies npm placed inside it; the console is served from its built files
# (packages/server/src/console/console-static.ts).
for package in protocol server sdk console; do
  mkdir -p "$dest/packages/$package"
  cp -a "$src/packages/$package/package.json" "$src/packages/$package/dist" "$dest/packages/$package/"
  if [ -d "$src/packages/$package/node_modules" ]; then
    cp -a "$src/packages/$package/node_modules" "$dest/packages/$package/"
  fi
done
cp -a "$src/packages/server/bin" "$dest/packages/server/"

# What is never loaded in the image (docs/decisions/0005-two-sqlite-bindings.md): the image's
# Node is 22 or later, so the server loads better-sqlite3 13 (`better-sqlite3-napi`) from the
# prebuilt binary of its platform. The SQLite sources of both bindings, 13's sources and its
# binaries for other systems (macOS, Windows, musl) go. better-sqlite3 12 stays as an unbuilt
# package (the install skipped its compile): it is the Node 20 binding, never required here.
modules=$dest/node_modules
rm -rf "$modules/better-sqlite3/deps" "$modules/better-sqlite3/src" \
  "$modules/better-sqlite3-napi/deps" "$modules/better-sqlite3-napi/src"
for binary in "$modules"/better-sqlite3-napi/prebuilds/*.node; do
  case "$(basename "$binary")" in
    linux-*) ;;
    *) rm -f "$binary" ;;
  esac
done
# Source maps of the build stay (stack traces name the TypeScript lines); TypeScript declarations
# of the dependencies are no use at run time.
find "$modules" -name '*.d.ts' -type f -delete
find "$modules" -name '*.d.mts' -type f -delete
find "$modules" -name '*.d.cts' -type f -delete

# The image's health check (its HEALTHCHECK runs `node /app/healthcheck.mjs`).
cp "$src/deploy/healthcheck.mjs" "$dest/healthcheck.mjs"
