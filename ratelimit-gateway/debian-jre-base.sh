#!/bin/sh
# A base image for the Dockerfile from Debian's packages alone, for a machine that reaches Debian's
# mirror but no image registry: debootstrap's minbase of bookworm with openjdk-17-jre-headless,
# imported into podman's image store. Needs root, debootstrap and podman. Prints the image's name on
# its last line, for the Dockerfile's BASE_IMAGE build argument:
#
#   base=$(./debian-jre-base.sh | tail -1)
#   podman build --build-arg BASE_IMAGE="$base" -t ratelimit-gateway .
#
# The tag carries this script's digest: while the image exists it is reused (GatewayImageIT runs this
# script every time; the first run on a machine takes a minute or two, later ones none), and an
# edited script builds a new one. DEBIAN_MIRROR chooses the mirror (default http://deb.debian.org/debian).
set -eu

mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
digest=$(sha256sum "$0" | cut -c1-12)
image="localhost/ratelimit-jre-base:bookworm-$digest"

if podman image exists "$image"; then
  echo "$image exists: reused" >&2
  echo "$image"
  exit 0
fi

rootfs=$(mktemp -d "${TMPDIR:-/var/tmp}/ratelimit-jre-base.XXXXXX")
trap 'rm -rf "$rootfs"' EXIT
echo "debootstrap bookworm (minbase, openjdk-17-jre-headless) from $mirror into $rootfs" >&2
debootstrap --variant=minbase --include=openjdk-17-jre-headless bookworm "$rootfs" "$mirror" >&2
# the downloaded packages and the package lists: not needed at run time
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
tar -C "$rootfs" -c . \
  | podman import \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'LABEL dev.ratelimit.base=bookworm-minbase-openjdk-17-jre-headless' \
      - "$image" >&2
echo "$image"
