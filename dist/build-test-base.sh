#!/bin/sh
# Builds a local JRE base image for the container tests, where no registry is reachable (see docs/distribution.md):
# a minimal Debian bookworm (debootstrap, from this machine's apt mirror) with openjdk-17-jre-headless, imported with
# `podman import`. Needs root. Skips everything if the image exists; reuses a cached root file system tarball.
#   dist/build-test-base.sh [IMAGE] [CACHE_TARBALL]
set -eu
image=${1:-localhost/buslane-jre17-base:test}
tarball=${2:-/var/tmp/buslane-jre17-rootfs.tar}
if podman image exists "$image"; then
  exit 0
fi
if [ ! -s "$tarball" ]; then
  mirror=$(grep -h -E '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null \
    | grep -i debian | grep -v -i security | sed -E 's/^URIs:[[:space:]]*//; s/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?//' \
    | awk '{print $1}' | head -n 1)
  mirror=${mirror:-http://deb.debian.org/debian}
  work=$(mktemp -d /var/tmp/buslane-rootfs.XXXXXX)
  trap 'umount "$work/rootfs/proc" 2>/dev/null || true; rm -rf "$work"' EXIT
  debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -n 20 "$work/debootstrap.log" >&2; exit 1; }
  cp /etc/resolv.conf "$work/rootfs/etc/resolv.conf"
  mount -t proc proc "$work/rootfs/proc"
  chroot "$work/rootfs" /bin/sh -c 'export DEBIAN_FRONTEND=noninteractive; apt-get update -qq &&
    apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless >/dev/null &&
    apt-get clean && rm -rf /var/lib/apt/lists/*'
  umount "$work/rootfs/proc"
  : >"$work/rootfs/etc/resolv.conf"
  tar -C "$work/rootfs" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
fi
podman import -q --change 'CMD ["/bin/sh"]' "$tarball" "$image" >/dev/null
