//! Compiling the hot loops for the CPU they run on. The crate is built for baseline x86-64
//! (SSE2); [`multiversion!`] defines a function three times — as written, compiled with AVX2
//! and FMA, and (with the `avx512` feature) compiled with AVX-512 — and calls the widest the
//! CPU has, so the loops in it (and the `#[inline(always)]` kernels it calls) are vectorised
//! eight or sixteen floats wide.
//!
//! `MEMLOOP_SIMD` caps the tier every encoder kernel may use ([`cap`]), as it does the
//! index's: `scalar`, `avx2`, `avxvnni` or `avx512`, so an older CPU's path can be run, timed
//! and compared on a newer one.

use std::sync::OnceLock;

/// The widest instruction tier the encoder's kernels may use, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    /// Portable code only (compiled for the build's baseline).
    Scalar,
    /// AVX2 and FMA (AMD's Zen 2 and Zen 3, Intel before Alder Lake's AVX-VNNI).
    Avx2,
    /// AVX2, FMA and AVX-VNNI's 256-bit `vpdpbusd` (Intel's client cores since Alder Lake).
    AvxVnni,
    /// AVX-512 (F, BW, VL) and its VNNI where the CPU has them: everything.
    Avx512,
}

impl Tier {
    /// Its name, as `MEMLOOP_SIMD` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Scalar => "scalar",
            Tier::Avx2 => "avx2",
            Tier::AvxVnni => "avxvnni",
            Tier::Avx512 => "avx512",
        }
    }
}

/// The cap `MEMLOOP_SIMD` sets (`scalar`, `avx2`, `avxvnni`; unset or anything else: no cap),
/// read once per process.
pub fn cap() -> Tier {
    static CAP: OnceLock<Tier> = OnceLock::new();
    *CAP.get_or_init(|| match std::env::var("MEMLOOP_SIMD").as_deref() {
        Ok("scalar") => Tier::Scalar,
        Ok("avx2") => Tier::Avx2,
        Ok("avxvnni") => Tier::AvxVnni,
        _ => Tier::Avx512,
    })
}

/// Whether the encoder may use `tier`'s instructions (within [`cap`]; the CPU's own flags
/// are checked where each kernel is chosen).
#[inline]
pub fn allows(tier: Tier) -> bool {
    cap() >= tier
}

/// The encoder's tier on this CPU within [`cap`]: the widest whose instructions the CPU has.
pub fn tier() -> Tier {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if allows(Tier::Avx512)
            && has!("avx512f")
            && has!("avx512bw")
            && has!("avx512vl")
            && has!("fma")
        {
            return Tier::Avx512;
        }
        if allows(Tier::AvxVnni) && has!("avx2") && has!("fma") && has!("avxvnni") {
            return Tier::AvxVnni;
        }
        if allows(Tier::Avx2) && has!("avx2") && has!("fma") {
            return Tier::Avx2;
        }
    }
    Tier::Scalar
}

/// `multiversion! { fn name(args) -> R { body } }`: `name` runs `body` compiled with AVX-512
/// (F, BW, VL; with the `avx512` feature) or AVX2 + FMA, whichever is the widest the CPU has
/// within [`cap`] (checked at each call; the checks are cached loads), else as written. Argument types must be
/// nameable without generics.
macro_rules! multiversion {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block) => {
        $(#[$meta])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            fn body($($arg: $ty),*) $(-> $ret)? $body

            #[cfg(all(target_arch = "x86_64", feature = "avx512"))]
            {
                #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
                fn avx512($($arg: $ty),*) $(-> $ret)? {
                    body($($arg),*)
                }
                if $crate::models::cpu_bert::simd::allows($crate::models::cpu_bert::simd::Tier::Avx512)
                    && std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bw")
                    && std::arch::is_x86_feature_detected!("avx512vl")
                    && std::arch::is_x86_feature_detected!("fma")
                {
                    // SAFETY: `avx512` may only run on a CPU with AVX-512 F, BW and VL and
                    // FMA (which imply AVX2), and all were just detected on this one.
                    #[allow(unsafe_code)]
                    return unsafe { avx512($($arg),*) };
                }
            }
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,fma")]
                fn avx2_fma($($arg: $ty),*) $(-> $ret)? {
                    body($($arg),*)
                }
                if $crate::models::cpu_bert::simd::allows($crate::models::cpu_bert::simd::Tier::Avx2)
                    && std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
                {
                    // SAFETY: `avx2_fma` may only run on a CPU with AVX2 and FMA, and both
                    // were just detected on this one.
                    #[allow(unsafe_code)]
                    return unsafe { avx2_fma($($arg),*) };
                }
            }
            body($($arg),*)
        }
    };
}

pub(crate) use multiversion;
