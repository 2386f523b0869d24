#!/bin/sh
# Regenerate the example reports under reports/ from fresh measurements on this machine:
#
#   make reports                 # both (the OS-builds one needs root for its userland)
#   sh reports/regenerate.sh example
#   sh reports/regenerate.sh os-builds
#   sh reports/regenerate.sh stacks
#
# Each is one paired `pqbench ab` session, stored in a throw-away database (the user's own
# store is never touched), then `pqbench report` with no run named: it reports the session
# just measured, both sides and their verdicts, into reports/<name>/ (replacing the old one).
# example:   AES-NI and SHA-NI hidden from OpenSSL against this system as it is.
# os-builds: Debian 12 (this system) against Debian 13 in a userland built beside it
#            (`pqbench userland build debian-trixie`: debootstrap, needs root).
# stacks:    one `pqbench speed` run, not a session: ML-KEM-768 and ML-DSA-65 against X25519
#            and Ed25519 through every foreign implementation (each worker built on first
#            use) beside liboqs and libcrypto, paired by cycle.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
pqbench="${PQBENCH:-$here/.venv/bin/pqbench}"
seconds="${PQBENCH_REPORT_SECONDS:-300}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

example() {
    db="$work/example.db"
    "$pqbench" ab ml-kem-768 x25519 ed25519 aes-128-gcm aes-256-gcm chacha20-poly1305 \
        aes-256-xts aes-256-cbc sha256 sha3-256 blake3 --bytes 16384 \
        --a mask:aesni,shani --b here \
        --label-a "masked aesni,shani" --label-b "unmasked" \
        --max-seconds "$seconds" --db "$db"
    "$pqbench" report --out "$here/reports/example" --force --db "$db"
}

os_builds() {
    db="$work/os-builds.db"
    "$pqbench" userland build debian-trixie
    "$pqbench" ab ml-kem-512 ml-kem-768 ml-kem-1024 ml-dsa-44 ml-dsa-65 ml-dsa-87 \
        x25519 ed25519 rsa2048 sha256 aes-256-gcm --bytes 16384 \
        --a here --b userland:debian-trixie \
        --label-a "Debian 12 (bookworm)" --label-b "Debian 13 (trixie)" \
        --max-seconds "$seconds" --db "$db"
    "$pqbench" report --out "$here/reports/os-builds" --force --db "$db"
}

stacks() {
    db="$work/stacks.db"
    "$pqbench" speed ml-kem-768 ml-dsa-65 x25519 ed25519 -i go -i aws-lc-rs -i libcrux \
        -i java -i bouncycastle -i liboqs -i libcrypto --seconds 2 --db "$db"
    "$pqbench" report --out "$here/reports/stacks" --force --db "$db"
}

case "${1:-all}" in
    example) example ;;
    os-builds) os_builds ;;
    stacks) stacks ;;
    all) example; os_builds; stacks ;;
    *) echo "usage: $0 [example|os-builds|stacks|all]" >&2; exit 2 ;;
esac
