//! Compiling the hot loops for the CPU they run on. The crate is built for baseline x86-64
//! (SSE2); [`multiversion!`] defines a function twice — as written, and compiled with AVX2 and
//! FMA — and calls the second where the CPU has both, so the loops in it (and the
//! `#[inline(always)]` kernels it calls) are vectorised eight floats wide.

/// `multiversion! { fn name(args) -> R { body } }`: `name` runs `body` compiled with AVX2 +
/// FMA when the CPU has both (checked at each call; the check is a cached load), else as
/// written. Argument types must be nameable without generics.
macro_rules! multiversion {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block) => {
        $(#[$meta])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            fn body($($arg: $ty),*) $(-> $ret)? $body

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
