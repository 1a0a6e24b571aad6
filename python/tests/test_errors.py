"""Errors raise MemloopError subclasses carrying the library's message."""

import pytest

import memloop
from conftest import ROOT


def test_every_error_is_a_memloop_error_with_a_code():
    for cls, code in [(memloop.InvalidArgumentError, 1), (memloop.NotFoundError, 2),
                      (memloop.LockedError, 3), (memloop.ModelMismatchError, 4),
                      (memloop.CorruptError, 5), (memloop.UnsupportedVersionError, 6),
                      (memloop.StorageIOError, 7), (memloop.StoreError, 8),
                      (memloop.VectorIndexError, 9), (memloop.EmbedError, 10),
                      (memloop.CallbackError, 11), (memloop.PanicError, 12),
                      (memloop.PoisonedError, 13), (memloop.BackgroundError, 14)]:
        assert issubclass(cls, memloop.MemloopError) and cls.code == code
    # Both were a plain StoreError before they had codes of their own.
    assert issubclass(memloop.PoisonedError, memloop.StoreError)
    assert issubclass(memloop.BackgroundError, memloop.StoreError)


def test_bad_arguments(store):
    with pytest.raises(memloop.InvalidArgumentError, match="empty"):
        store.remember("   ")
    with pytest.raises(memloop.InvalidArgumentError, match="empty"):
        store.remember("\x00")
    with pytest.raises(memloop.InvalidArgumentError, match="over the limit"):
        store.remember("x" * (512 * 1024 + 1))
    with pytest.raises(memloop.InvalidArgumentError, match="poem"):
        store.remember("x", kind="poem")
    with pytest.raises(memloop.InvalidArgumentError, match="importance"):
        store.remember("x", importance=3.0)
    with pytest.raises(memloop.InvalidArgumentError, match="unknown field `page`"):
        store.remember("x", source={"document": "d", "page": 3})
    # A misspelt keyword is named, with the fields remember takes, as remember_batch names it.
    with pytest.raises(memloop.InvalidArgumentError, match="unknown field `kinds`.*kind"):
        store.remember("x", kinds="fact")
    with pytest.raises(memloop.InvalidArgumentError, match="unknown field `tag`"):
        store.remember_explained("x", tag=["a"])
    with pytest.raises(ValueError):  # also a ValueError
        store.remember("")
    with pytest.raises(memloop.InvalidArgumentError, match="clock"):
        memloop.Memory("/tmp/never", clock="lunar")
    with pytest.raises(memloop.InvalidArgumentError, match="device"):
        memloop.Memory("/tmp/never", device="tpu")
    # The test build has no CUDA: asking for a GPU is a clear error, not a crash.
    with pytest.raises(memloop.InvalidArgumentError, match="without CUDA support"):
        memloop.Memory("/tmp/never", device="cuda:0")


def test_a_second_open_of_the_same_store_is_locked(store):
    with pytest.raises(memloop.LockedError, match="locked"):
        memloop.Memory(store.path, hashing_embedder=64)


def test_another_model_is_a_mismatch(tmp_path):
    with memloop.Memory(tmp_path / "s", hashing_embedder=32) as m:
        m.remember("x")
    with pytest.raises(memloop.ModelMismatchError, match="export and import"):
        memloop.Memory(tmp_path / "s", hashing_embedder=48)


def test_a_missing_model_names_the_directory(tmp_path):
    with pytest.raises(memloop.EmbedError, match="no-such-model"):
        memloop.Memory(tmp_path / "s", model=tmp_path / "no-such-model")


def test_io_errors(store, tmp_path):
    with pytest.raises(memloop.StorageIOError, match="missing"):
        store.import_(tmp_path / "missing" / "file.mlx")
    bad = tmp_path / "bad.mlx"
    bad.write_bytes(b"this is not an export file")
    with pytest.raises(memloop.MemloopError, match="bad.mlx"):
        store.import_(bad)


def test_a_crafted_export_is_an_exception_not_a_dead_interpreter(store):
    """An item claiming a 2^62-byte text (checksums recomputed) used to abort the process."""
    crafted = ROOT / "ffi" / "tests" / "data" / "huge-length.mlx"
    before = store.stats()["memories"]
    with pytest.raises(memloop.CorruptError, match="record 0"):
        store.import_(crafted)
    assert store.stats()["memories"] == before
