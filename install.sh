#!/bin/sh
# Installs a released `uatu` binary: picks the build for this machine (Linux x86_64 or
# aarch64, macOS arm64), downloads it with the release's SHA256SUMS, refuses it unless its
# checksum matches, and puts it in PREFIX/bin (default ~/.local/bin), replacing any
# earlier one in a single rename.
#
#   curl -fsSL <release>/install.sh | sh
#   sh install.sh [--prefix DIR] [--version vX.Y.Z] [--base-url URL]
#
# --base-url (or UATU_INSTALL_BASE_URL) is where releases are published: assets are
# fetched from BASE/download/TAG/ASSET, or BASE/latest/download/ASSET without a version,
# as GitHub serves them; a mirror or a test server laid out the same way works too.
# UATU_INSTALL_PREFIX and UATU_INSTALL_VERSION stand for the other two flags.
set -eu

# The release workflow (.github/workflows/release.yml) fills these in for the copy of this
# script it attaches to a release; this copy then installs that release from where it is.
default_base_url="@RELEASE_BASE_URL@"
default_version="@RELEASE_TAG@"

say() { printf 'install.sh: %s\n' "$*"; }
fail() { printf 'install.sh: error: %s\n' "$*" >&2; exit 1; }

usage() {
  cat <<'EOF'
usage: install.sh [--prefix DIR] [--version vX.Y.Z] [--base-url URL]

Installs the `uatu` binary of a release into DIR/bin (default: ~/.local/bin).

  --prefix DIR      install into DIR/bin                   (env UATU_INSTALL_PREFIX)
  --version TAG     the release to install, e.g. v0.1.0    (env UATU_INSTALL_VERSION)
  --base-url URL    where the releases are: assets are URL/download/TAG/NAME
                    (URL/latest/download/NAME without a version)
                                                           (env UATU_INSTALL_BASE_URL)
EOF
}

prefix="${UATU_INSTALL_PREFIX:-${HOME:-}/.local}"
version="${UATU_INSTALL_VERSION:-}"
base_url="${UATU_INSTALL_BASE_URL:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || fail "--prefix needs a directory"; prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --version) [ $# -ge 2 ] || fail "--version needs a tag"; version="$2"; shift 2 ;;
    --version=*) version="${1#--version=}"; shift ;;
    --base-url) [ $# -ge 2 ] || fail "--base-url needs a URL"; base_url="$2"; shift 2 ;;
    --base-url=*) base_url="${1#--base-url=}"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; fail "unknown argument: $1" ;;
  esac
done

# A placeholder the release workflow did not fill in means this copy came from the
# repository, not from a release.
case "$default_base_url" in @*@) default_base_url="" ;; esac
case "$default_version" in @*@) default_version="" ;; esac
base_url="${base_url:-$default_base_url}"
version="${version:-$default_version}"
[ -n "$base_url" ] || fail "no release to install from: this install.sh is not a release's copy; give --base-url (the releases page of the repository)"
[ -n "$prefix" ] || fail "no prefix: HOME is not set; give --prefix"
base_url="${base_url%/}"

os="$(uname -s)"
arch="$(uname -m)"
case "$os/$arch" in
  Linux/x86_64|Linux/amd64) target="x86_64-unknown-linux-gnu" ;;
  Linux/aarch64|Linux/arm64) target="aarch64-unknown-linux-gnu" ;;
  Darwin/arm64|Darwin/aarch64) target="aarch64-apple-darwin" ;;
  *) fail "no prebuilt uatu for $os $arch (there are Linux x86_64 and aarch64, macOS arm64); build it from source: dev/install in a checkout" ;;
esac
asset="uatu-$target.tar.gz"
if [ -n "$version" ]; then
  release_url="$base_url/download/$version"
else
  release_url="$base_url/latest/download"
fi

if command -v curl >/dev/null 2>&1; then
  download() { curl --fail --silent --show-error --location --output "$2" "$1"; }
elif command -v wget >/dev/null 2>&1; then
  download() { wget --quiet --output-document="$2" "$1"; }
else
  fail "neither curl nor wget is installed"
fi
if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$1" | cut -d ' ' -f 1; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 "$1" | cut -d ' ' -f 1; }
else
  fail "neither sha256sum nor shasum is installed: cannot check the download"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/uatu-install.XXXXXX")"
staged=""
cleanup() {
  rm -rf "$work"
  if [ -n "$staged" ]; then rm -f "$staged"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say "downloading $release_url/$asset"
download "$release_url/SHA256SUMS" "$work/SHA256SUMS" || fail "cannot download $release_url/SHA256SUMS"
download "$release_url/$asset" "$work/$asset" || fail "cannot download $release_url/$asset"

expected="$(awk -v name="$asset" '$2 == name || $2 == "*" name { print $1; exit }' "$work/SHA256SUMS")"
[ -n "$expected" ] || fail "$release_url/SHA256SUMS has no line for $asset"
actual="$(sha256 "$work/$asset")"
if [ "$actual" != "$expected" ]; then
  fail "checksum mismatch for $asset: SHA256SUMS says $expected, the download is $actual; nothing was installed"
fi
say "checksum ok (sha256 $actual)"

mkdir "$work/unpacked"
tar -xzf "$work/$asset" -C "$work/unpacked" || fail "$asset is not a readable tar.gz archive"
[ -f "$work/unpacked/uatu" ] || fail "$asset holds no uatu binary"

bin_dir="$prefix/bin"
mkdir -p "$bin_dir" || fail "cannot create $bin_dir"
# Copy next to the destination, then rename over it: never a half-written uatu on the PATH.
staged="$bin_dir/.uatu.install.$$"
cp "$work/unpacked/uatu" "$staged" || fail "cannot write into $bin_dir"
chmod 755 "$staged"
mv -f "$staged" "$bin_dir/uatu" || fail "cannot replace $bin_dir/uatu"
staged=""

installed_version="$("$bin_dir/uatu" version 2>/dev/null | head -n 1 || true)"
say "installed ${installed_version:-uatu} ($target) into $bin_dir/uatu"
case ":${PATH:-}:" in
  *":$bin_dir:"*) ;;
  *) say "$bin_dir is not on your PATH; add it: export PATH=\"$bin_dir:\$PATH\"" ;;
esac
