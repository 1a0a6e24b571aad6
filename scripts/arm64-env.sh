# Sourced by the aarch64 scripts (build-arm64.sh, test-arm64.sh): installs the cross toolchain
# when missing (rustup's aarch64-unknown-linux-gnu target; Debian's gcc/g++-aarch64-linux-gnu
# and qemu-user, as root or through sudo) and exports what cargo and the cc crate need to
# build for aarch64 and run its programs under qemu. Sets `target`, `sysroot` and `sudo`.
target=aarch64-unknown-linux-gnu
sysroot=/usr/aarch64-linux-gnu
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
bash scripts/rustup-target.sh "$target"
if ! command -v aarch64-linux-gnu-g++ >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
    bash scripts/apt-install.sh gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user
fi
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
export CXX_aarch64_unknown_linux_gnu=aarch64-linux-gnu-g++
export AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L $sysroot"
# Where qemu (run by the runner, or by binfmt_misc for a child process) finds the aarch64
# dynamic loader and libraries.
export QEMU_LD_PREFIX=$sysroot
