"""An encrypted store from Python: key_file / passphrase, typed key errors, a sealed export,
and erasure with its signed receipt."""

import json

import pytest

import memloop


def test_a_store_opened_with_a_key_file_needs_it_again(tmp_path):
    key = tmp_path / "mem.key"
    with memloop.Memory(tmp_path / "s", hashing_embedder=64, key_file=key) as m:
        m.remember("Ana's locker code is 7731", user="ana")
        m.remember("Bob prefers the window seat", user="bob")
        m.export(tmp_path / "out.mlx")
    assert key.exists()
    assert b"7731" not in (tmp_path / "out.mlx").read_bytes()
    for f in (tmp_path / "s").iterdir():
        assert b"locker" not in f.read_bytes(), f
    with pytest.raises(memloop.StoreKeyError, match="encrypted") as e:
        memloop.Memory(tmp_path / "s", hashing_embedder=64)
    assert e.value.code == 15 and not isinstance(e.value, KeyError)
    with memloop.Memory(tmp_path / "s", hashing_embedder=64, key_file=key) as m:
        erased = m.forget_scope(user="ana")
        receipt = erased["receipt"]
        assert receipt["user"] == "ana" and receipt["destroyed_key"]
        assert receipt["counts"]["items"] == 1
        assert len(receipt["signature"]) == 128
        assert [h.item.text for h in m.recall("seat", user="bob")] == [
            "Bob prefers the window seat"
        ]
        # The exact signed bytes, to keep and verify later.
        assert json.loads(erased["receipt_line"]) == json.loads(json.dumps(receipt))
        assert erased["receipt_line"].endswith("\n")


def test_a_wrong_passphrase_is_a_key_error(tmp_path):
    key = tmp_path / "mem.key"
    with memloop.Memory(tmp_path / "s", hashing_embedder=64, key_file=key, passphrase="pw one"):
        pass
    with pytest.raises(memloop.StoreKeyError, match="wrong key"):
        memloop.Memory(tmp_path / "s", hashing_embedder=64, key_file=key, passphrase="pw two")
    with pytest.raises(memloop.InvalidArgumentError, match="key_file"):
        memloop.Memory(tmp_path / "t", hashing_embedder=64, passphrase="pw")


def test_two_devices_sync_through_a_shared_folder(tmp_path):
    remote = (tmp_path / "shared").as_uri()
    key = tmp_path / "a.key"
    with memloop.Memory(tmp_path / "a", hashing_embedder=64, key_file=key) as a:
        a.remember("Ana's locker code is 7731", user="ana")
        done = a.sync(remote)
        assert (done["pushed"], done["pulled"]) == (1, 0)
    # The other device's key file: the same ring, carried by hand.
    key_b = tmp_path / "b.key"
    key_b.touch(mode=0o600)
    key_b.write_bytes(key.read_bytes())
    with memloop.Memory(tmp_path / "b", hashing_embedder=64, key_file=key_b) as b:
        done = b.sync(remote, timeout_secs=30)
        assert done["pulled"] == 1 and done["refused"] == []
        assert [h.item.text for h in b.recall("locker", user="ana")] == [
            "Ana's locker code is 7731"
        ]
    for f in (tmp_path / "shared").rglob("*"):
        if f.is_file():
            assert b"7731" not in f.read_bytes(), f
    with memloop.Memory(tmp_path / "plain", hashing_embedder=64) as plain:
        with pytest.raises(memloop.InvalidArgumentError, match="encrypted"):
            plain.sync(remote)
    with memloop.Memory(tmp_path / "a", hashing_embedder=64, key_file=key) as a:
        with pytest.raises(memloop.InvalidArgumentError):
            a.sync("ftp://example.invalid/x")
        with pytest.raises(memloop.InvalidArgumentError):
            a.sync(remote, timeout_secs=0)
