#!/usr/bin/env bash
# The benchmarks' CPUID mask (benches/cpuid_mask.c) does what BENCHMARKS.md relies on: a
# program loaded with it sees no AVX-512 (and, under CPUID_MASK=avx2, no AVX-VNNI) through the
# `cpuid` instruction itself, on its first thread and on threads it starts later, and sees the
# CPU as it is without CPUID_MASK. Built with -Werror everywhere; run where the CPU and kernel
# offer CPUID faulting (x86-64 with the `cpuid_fault` flag), said so and skipped elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
case $(uname -m) in
    x86_64) ;;
    *) echo "cpuid mask: not x86-64, skipped"; exit 0 ;;
esac
out=target/cpuid-mask-check
mkdir -p "$out"
cc -O2 -Wall -Wextra -Werror -shared -fPIC -o "$out/cpuid_mask.so" benches/cpuid_mask.c
cat > "$out/probe.c" <<'EOF'
// Prints "AVX512F AVX_VNNI" as 0/1 from `cpuid` on the main thread and on a new thread.
#include <cpuid.h>
#include <pthread.h>
#include <stdio.h>

static void probe(const char *who) {
    unsigned a, b, c, d;
    __cpuid_count(7, 0, a, b, c, d);
    unsigned avx512f = (b >> 16) & 1;
    __cpuid_count(7, 1, a, b, c, d);
    printf("%s %u %u\n", who, avx512f, (a >> 4) & 1);
}

static void *thread_main(void *arg) {
    (void)arg;
    probe("thread");
    return NULL;
}

int main(void) {
    probe("main");
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, NULL) != 0) return 1;
    pthread_join(t, NULL);
    return 0;
}
EOF
cc -O2 -Wall -Wextra -Werror -pthread -o "$out/probe" "$out/probe.c"
if ! grep -qw cpuid_fault /proc/cpuinfo; then
    echo "cpuid mask: built; this CPU or hypervisor offers no CPUID faulting, so not run"
    exit 0
fi
lib=$PWD/$out/cpuid_mask.so
# A kernel or sandbox may refuse ARCH_SET_CPUID though the CPU has the flag: the library then
# stops the program (status 3) with its reason, and the check says so instead of failing.
if ! why=$(CPUID_MASK=avx2 LD_PRELOAD=$lib "$out/probe" 2>&1 >/dev/null); then
    if grep -q 'offers no CPUID faulting' <<<"$why"; then
        echo "cpuid mask: built; CPUID faulting refused here ($why), so not run"
        exit 0
    fi
    echo "cpuid mask: the masked probe failed: $why" >&2
    exit 1
fi
real=$("$out/probe")
read -r _ real_avx512 real_vnni <<<"$(head -1 <<<"$real")"
expect() {
    local mask=$1 want=$2 got
    got=$(CPUID_MASK=$mask LD_PRELOAD=$lib "$out/probe")
    if [ "$got" != "$want" ]; then
        printf 'cpuid mask %s: expected\n%s\ngot\n%s\n' "$mask" "$want" "$got" >&2
        exit 1
    fi
}
expect avx2 $'main 0 0\nthread 0 0'
expect avxvnni "main 0 $real_vnni"$'\n'"thread 0 $real_vnni"
# Without CPUID_MASK the library changes nothing.
[ "$(LD_PRELOAD=$lib "$out/probe")" = "$real" ] || { echo "cpuid mask: unmasked run differs" >&2; exit 1; }
# A mask it does not know stops the program rather than run it unmasked.
if CPUID_MASK=avx9 LD_PRELOAD=$lib "$out/probe" >/dev/null 2>&1; then
    echo "cpuid mask: an unknown mask ran the program" >&2
    exit 1
fi
echo "cpuid mask: AVX-512 ($real_avx512 here) and AVX-VNNI ($real_vnni here) hidden as asked, on every thread"
