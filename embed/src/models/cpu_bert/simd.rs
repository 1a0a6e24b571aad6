//! Compiling the hot loops for the CPU they run on. The crate is built for baseline x86-64
//! (SSE2); [`multiversion!`] defines a function three times — as written, compiled with AVX2
//! and FMA, and (with the `avx512` feature) compiled with AVX-512 — and calls the widest the
//! CPU has, so the loops in it (and the `#[inline(always)]` kernels it calls) are vectorised
//! eight or sixteen floats wide.

/// `multiversion! { fn name(args) -> R { body } }`: `name` runs `body` compiled with AVX-512
/// (F, BW, VL; with the `avx512` feature) or AVX2 + FMA, whichever is the widest the CPU has
/// (checked at each call; the check is a cached load), else as written. Argument types must be
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
                if std::arch::is_x86_feature_detected!("avx512f")
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
                if std::arch::is_x86_feature_detected!("avx2")
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
