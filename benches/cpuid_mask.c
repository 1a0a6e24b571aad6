// A CPU's narrower instruction sets shown to a program that has no switch for them, natively:
// loaded with LD_PRELOAD, this library makes the `cpuid` instruction fault (Linux's
// ARCH_SET_CPUID, where the CPU and the hypervisor offer CPUID faulting: the `cpuid_fault`
// flag) and answers each `cpuid` itself with the real answer less the features that
// CPUID_MASK names. onnxruntime (MLAS) reads the CPU's features once with `cpuid` and picks its
// kernels from them, so under `CPUID_MASK=avx2` it runs the kernels it runs on a CPU with AVX2
// and FMA alone (no AVX-512, no VNNI, no AMX), and under `CPUID_MASK=avxvnni` those of a CPU
// with AVX-VNNI but no AVX-512 (Intel's client CPUs since the 12th generation). Nothing is
// emulated: every other instruction runs on the CPU as it is (its caches, its clock), so the
// figures are the narrower kernels' on this core, not another CPU's.
//
//   cc -O2 -shared -fPIC -o target/cpuid_mask.so benches/cpuid_mask.c
//   CPUID_MASK=avx2 LD_PRELOAD=target/cpuid_mask.so python3 benches/embed_peers.py …
//
// The setting holds for every thread and child the process starts after it loaded (Linux
// keeps it across clone and fork, and resets it at exec, where LD_PRELOAD loads it again).
// Without CPUID faulting the library says so on stderr and exits the program with status 3:
// figures measured unmasked must not pass for masked ones.
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define ARCH_SET_CPUID 0x1012

// Leaf 7 subleaf 0, EBX: AVX512F (16), DQ (17), IFMA (21), CD (28), BW (30), VL (31).
static const uint32_t AVX512_EBX = (1u << 16) | (1u << 17) | (1u << 21) | (1u << 28) |
                                   (1u << 30) | (1u << 31);
// Leaf 7 subleaf 0, ECX: VBMI (1), VBMI2 (6), VNNI (11), BITALG (12), VPOPCNTDQ (14).
static const uint32_t AVX512_ECX = (1u << 1) | (1u << 6) | (1u << 11) | (1u << 12) | (1u << 14);
// Leaf 7 subleaf 0, EDX: AMX-BF16 (22), AVX512-FP16 (23), AMX-TILE (24), AMX-INT8 (25).
static const uint32_t AVX512_EDX = (1u << 22) | (1u << 23) | (1u << 24) | (1u << 25);
// Leaf 7 subleaf 1, EAX: AVX-VNNI (4), AVX512-BF16 (5).
static const uint32_t AVX_VNNI_EAX = 1u << 4;
static const uint32_t AVX512_BF16_EAX = 1u << 5;

static int hide_avx_vnni;

static long set_cpuid(int enabled) { return syscall(SYS_arch_prctl, ARCH_SET_CPUID, enabled); }

static void on_segv(int sig, siginfo_t *info, void *context) {
    (void)info;
    ucontext_t *uc = context;
    greg_t *g = uc->uc_mcontext.gregs;
    const unsigned char *ip = (const unsigned char *)g[REG_RIP];
    if (ip[0] != 0x0f || ip[1] != 0xa2) {
        // Not a `cpuid`: a real fault, delivered as it would have been.
        signal(sig, SIG_DFL);
        return;
    }
    uint32_t leaf = (uint32_t)g[REG_RAX], sub = (uint32_t)g[REG_RCX];
    uint32_t a, b, c, d;
    set_cpuid(1);
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(leaf), "c"(sub));
    set_cpuid(0);
    if (leaf == 7 && sub == 0) {
        b &= ~AVX512_EBX;
        c &= ~AVX512_ECX;
        d &= ~AVX512_EDX;
    } else if (leaf == 7 && sub == 1) {
        a &= ~AVX512_BF16_EAX;
        if (hide_avx_vnni) a &= ~AVX_VNNI_EAX;
    }
    // The 32-bit results zero the registers' upper halves, as the instruction does.
    g[REG_RAX] = a;
    g[REG_RBX] = b;
    g[REG_RCX] = c;
    g[REG_RDX] = d;
    g[REG_RIP] += 2;
}

__attribute__((constructor)) static void install(void) {
    const char *mask = getenv("CPUID_MASK");
    if (!mask || !*mask) return;
    if (strcmp(mask, "avx2") == 0) {
        hide_avx_vnni = 1;
    } else if (strcmp(mask, "avxvnni") == 0) {
        hide_avx_vnni = 0;
    } else {
        fprintf(stderr, "cpuid_mask: CPUID_MASK=%s is neither avx2 nor avxvnni\n", mask);
        _exit(3);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, NULL) != 0 || set_cpuid(0) != 0) {
        fprintf(stderr, "cpuid_mask: this CPU or kernel offers no CPUID faulting (no cpuid_fault "
                        "flag): nothing can be masked\n");
        _exit(3);
    }
}
