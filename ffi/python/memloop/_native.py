"""The C ABI through ctypes: loading the library and declaring every function."""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

ABI_VERSION = 1

_NAMES = {"darwin": "libmemloop_ffi.dylib", "win32": "memloop_ffi.dll"}
LIBRARY_NAME = _NAMES.get(sys.platform, "libmemloop_ffi.so")

c_char_p = ctypes.c_char_p
c_void_p = ctypes.c_void_p
c_int32 = ctypes.c_int32
c_int64 = ctypes.c_int64
c_uint32 = ctypes.c_uint32
c_uint64 = ctypes.c_uint64
c_size_t = ctypes.c_size_t
c_float_p = ctypes.POINTER(ctypes.c_float)
# Returned strings are freed by memloop_free_string, so they come back as raw pointers.
c_string_out = ctypes.POINTER(ctypes.c_void_p)

RERANK_FN = ctypes.CFUNCTYPE(c_int32, c_void_p, c_char_p, c_char_p, c_float_p, c_size_t)
REFINE_FN = ctypes.CFUNCTYPE(c_int64, c_void_p, c_char_p, c_char_p, c_uint32, c_void_p, c_size_t)
SUMMARIZE_FN = ctypes.CFUNCTYPE(c_int64, c_void_p, c_char_p, c_void_p, c_size_t)
COUNT_TOKENS_FN = ctypes.CFUNCTYPE(c_int64, c_void_p, c_char_p)


class Hooks(ctypes.Structure):
    """memloop_hooks_t."""

    _fields_ = [
        ("user_data", c_void_p),
        ("rerank", RERANK_FN),
        ("refine", REFINE_FN),
        ("summarize", SUMMARIZE_FN),
        ("count_tokens", COUNT_TOKENS_FN),
    ]


_SIGNATURES = {
    "memloop_abi_version": (c_uint32, []),
    "memloop_version": (c_char_p, []),
    "memloop_last_error": (c_char_p, []),
    "memloop_free_string": (None, [c_void_p]),
    "memloop_set_callback_error": (None, [c_char_p]),
    "memloop_open": (c_int32, [c_char_p, c_char_p, ctypes.POINTER(Hooks), ctypes.POINTER(c_void_p)]),
    "memloop_close": (c_int32, [c_void_p]),
    "memloop_remember": (c_int32, [c_void_p, c_char_p, ctypes.POINTER(c_uint64)]),
    "memloop_remember_explained": (c_int32, [c_void_p, c_char_p, c_string_out]),
    "memloop_remember_batch": (
        c_int32,
        [c_void_p, c_char_p, ctypes.POINTER(c_uint64), c_size_t, ctypes.POINTER(c_size_t)],
    ),
    "memloop_get": (c_int32, [c_void_p, c_uint64, c_string_out]),
    "memloop_forget": (c_int32, [c_void_p, c_uint64]),
    "memloop_recall": (c_int32, [c_void_p, c_char_p, c_string_out]),
    "memloop_context": (c_int32, [c_void_p, c_char_p, c_string_out]),
    "memloop_feedback": (c_int32, [c_void_p, c_uint64, c_int32]),
    "memloop_record_task": (c_int32, [c_void_p, c_char_p, c_string_out]),
    "memloop_observe": (
        c_int32,
        [c_void_p, c_char_p, c_char_p, c_char_p, ctypes.POINTER(c_uint64)],
    ),
    "memloop_sweep": (c_int32, [c_void_p, c_string_out]),
    "memloop_stats": (c_int32, [c_void_p, c_string_out]),
    "memloop_check": (c_int32, [c_void_p, c_string_out]),
    "memloop_checkpoint": (c_int32, [c_void_p]),
    "memloop_export": (c_int32, [c_void_p, c_char_p, ctypes.POINTER(c_uint64)]),
    "memloop_import": (c_int32, [c_void_p, c_char_p, c_string_out]),
    "memloop_set_time": (c_int32, [c_void_p, c_int64]),
}


def library_path() -> Path:
    """`$MEMLOOP_LIBRARY` if set, else the library shipped in this package."""
    override = os.environ.get("MEMLOOP_LIBRARY")
    return Path(override) if override else Path(__file__).resolve().parent / LIBRARY_NAME


def load() -> ctypes.CDLL:
    """Loads the library, declares its functions, and checks its ABI version."""
    path = library_path()
    if not path.exists():
        raise ImportError(
            f"memloop's native library is missing at {path}: install the package with "
            "`pip install ./ffi/python` (it builds the library), or set MEMLOOP_LIBRARY"
        )
    lib = ctypes.CDLL(str(path))
    for name, (restype, argtypes) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    found = lib.memloop_abi_version()
    if found != ABI_VERSION:
        raise ImportError(f"{path} has ABI version {found}; this package needs {ABI_VERSION}")
    return lib


LIB = load()
