/* ProcessPrng for Wine 8, which has no bcryptprimitives.dll (Wine 9 added it; every Windows
 * since 10 has it). Rust's standard library takes its random bytes from it, so without it no
 * Rust program built for Windows starts under Debian 12's Wine. Installed into the test
 * prefix only (scripts/windows-env.sh), never shipped: the bytes come from Wine's own
 * RtlGenRandom (advapi32's SystemFunction036), the same source Windows' ProcessPrng draws on. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG n = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, n))
            return FALSE;
        data += n;
        length -= n;
    }
    return TRUE;
}
