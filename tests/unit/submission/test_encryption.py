"""OpenSSL `enc` files: openssl's default derivation (what pack_submission.sh --unpack opens), PBKDF2, passphrases."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from mlsubmit.submission import encryption as enc

from mlsubmit.core.errors import FatalError

OPENSSL = shutil.which("openssl")
needs_openssl = pytest.mark.skipif(OPENSSL is None, reason="the openssl command is not installed")
# pack_submission.sh's own options; the passphrase comes from a file instead of the terminal prompt
PACK = ["enc", "-e", "-aes256"]
UNPACK = ["enc", "-d", "-aes256"]
PBKDF2 = ["-pbkdf2", "-iter", str(enc.PBKDF2_ITERATIONS), "-md", "sha256"]


def gzip_like(path: Path, size: int) -> bytes:
    data = b"\x1f\x8b" + os.urandom(size)
    path.write_bytes(data)
    return data


def test_openssl_default_derivation_matches_known_bytes(tmp_path: Path) -> None:
    # EVP_BytesToKey(SHA-256, 1 round) of b"pw" with this salt, as `openssl enc -aes256 -P -S 0001020304050607
    # -pass pass:pw` prints with openssl 3.0 (and any openssl >= 1.1.0)
    key, iv = enc._key_iv(b"pw", bytes(range(8)), enc.KDF_OPENSSL)
    assert key.hex() == "93c631f5a900c2d14647667d84f0cf3e64cb94a8ea4ae0b33d47f950e24fb58d"
    assert iv.hex() == "2000e9f64c9107cffbf8d18ab6e1bdd1"
    if OPENSSL:
        shown = subprocess.run([OPENSSL, "enc", "-aes256", "-P", "-S", "0001020304050607", "-pass", "pass:pw"],
                               capture_output=True, text=True, check=True).stdout
        fields = {k.strip(): v.strip() for k, _, v in (line.partition("=") for line in shown.splitlines())}
        assert fields["key"].lower() == key.hex() and fields["iv"].lower() == iv.hex()


@needs_openssl
def test_openssl_1_0_archives_md5_derivation_are_read(tmp_path: Path) -> None:
    assert OPENSSL is not None
    plain = tmp_path / "p.tar.gz"
    data = gzip_like(plain, 5000)
    subprocess.run([OPENSSL, *PACK, "-md", "md5", "-pass", "pass:old", "-in", str(plain), "-out",
                    str(tmp_path / "old.enc")], check=True, capture_output=True)
    assert enc.decrypt_any(tmp_path / "old.enc", tmp_path / "back", b"old") == enc.KDF_OPENSSL_MD5
    assert (tmp_path / "back").read_bytes() == data


def test_round_trip_both_derivations_and_wrong_passphrase(tmp_path: Path) -> None:
    plain = tmp_path / "p.tar.gz"
    data = gzip_like(plain, 100_000)
    for kdf in enc.KDFS:
        enc.encrypt_file(plain, tmp_path / f"{kdf}.enc", b"secret phrase", kdf=kdf)
        body = (tmp_path / f"{kdf}.enc").read_bytes()
        assert body.startswith(b"Salted__") and (len(body) - 16) % 16 == 0 and data not in body
        assert enc.decrypt_any(tmp_path / f"{kdf}.enc", tmp_path / "back", b"secret phrase") == kdf
        assert (tmp_path / "back").read_bytes() == data
        with pytest.raises(enc.CryptoError):
            enc.decrypt_any(tmp_path / f"{kdf}.enc", tmp_path / "x", b"wrong phrase!")
    body = (tmp_path / "openssl.enc").read_bytes()
    (tmp_path / "cut.enc").write_bytes(body[:-5])
    with pytest.raises(enc.CryptoError, match="truncated"):
        enc.decrypt_any(tmp_path / "cut.enc", tmp_path / "y", b"secret phrase")
    (tmp_path / "plain.enc").write_bytes(b"not encrypted at all")
    with pytest.raises(enc.CryptoError, match="Salted__"):
        enc.decrypt_any(tmp_path / "plain.enc", tmp_path / "z", b"secret phrase")


def test_salt_is_random_so_two_encryptions_differ(tmp_path: Path) -> None:
    plain = tmp_path / "p"
    plain.write_bytes(b"same")
    enc.encrypt_file(plain, tmp_path / "a", b"k")
    enc.encrypt_file(plain, tmp_path / "b", b"k")
    assert (tmp_path / "a").read_bytes() != (tmp_path / "b").read_bytes()


@needs_openssl
@pytest.mark.parametrize("kdf", enc.KDFS)
def test_openssl_opens_what_we_write_and_we_open_what_openssl_writes(tmp_path: Path, kdf: str) -> None:
    assert OPENSSL is not None
    passfile = tmp_path / "pass.txt"
    passfile.write_bytes(b"correct horse battery staple\nsecond line is ignored\n")
    phrase = enc.read_passphrase(passfile)
    assert phrase == b"correct horse battery staple"
    extra = PBKDF2 if kdf == enc.KDF_PBKDF2 else []
    plain = tmp_path / "Org.tar.gz"
    data = gzip_like(plain, 70_001)
    enc.encrypt_file(plain, tmp_path / "ours", phrase, kdf=kdf)
    subprocess.run([OPENSSL, *UNPACK, *extra, "-pass", f"file:{passfile}", "-in", str(tmp_path / "ours"),
                    "-out", str(tmp_path / "by-openssl")], check=True, capture_output=True)
    assert (tmp_path / "by-openssl").read_bytes() == data
    subprocess.run([OPENSSL, *PACK, *extra, "-pass", f"file:{passfile}", "-in", str(plain),
                    "-out", str(tmp_path / "theirs")], check=True, capture_output=True)
    assert enc.decrypt_any(tmp_path / "theirs", tmp_path / "by-us", phrase) == kdf
    assert (tmp_path / "by-us").read_bytes() == data


@needs_openssl
def test_the_printed_open_command_opens_the_file(tmp_path: Path) -> None:
    passfile = tmp_path / "pass.txt"
    phrase = enc.generate_passphrase(passfile)
    plain = tmp_path / "p.tar.gz"
    data = gzip_like(plain, 1000)
    for kdf in enc.KDFS:
        enc.encrypt_file(plain, tmp_path / "x.enc", phrase, kdf=kdf)
        line = enc.open_command(kdf, str(tmp_path / "x.enc"), str(tmp_path / "x.out"), str(passfile))
        assert line.startswith("openssl enc -d -aes256 ")
        subprocess.run(line.split(), check=True, capture_output=True)
        assert (tmp_path / "x.out").read_bytes() == data


def test_generated_passphrase_is_long_private_and_never_replaces_a_file(tmp_path: Path) -> None:
    target = tmp_path / "pass.txt"
    phrase = enc.generate_passphrase(target)
    assert len(phrase) >= 40 and target.read_bytes() == phrase + b"\n"
    assert target.stat().st_mode & 0o777 == 0o600 and not enc.readable_by_others(target)
    assert enc.read_passphrase(target) == phrase
    with pytest.raises(FatalError, match="already exists"):
        enc.generate_passphrase(target)
    assert target.read_bytes() == phrase + b"\n"
    target.chmod(0o640)
    assert enc.readable_by_others(target)


def test_passphrase_file_rules(tmp_path: Path) -> None:
    p = tmp_path / "p"
    p.write_bytes(b"\n")
    with pytest.raises(FatalError, match="empty"):
        enc.read_passphrase(p)
    p.write_bytes(b"x" * 2000)
    with pytest.raises(FatalError, match="longer than"):
        enc.read_passphrase(p)
    with pytest.raises(FatalError, match="cannot read"):
        enc.read_passphrase(tmp_path / "absent")
    p.write_bytes(b"no newline at the end")
    assert enc.read_passphrase(p) == b"no newline at the end"
