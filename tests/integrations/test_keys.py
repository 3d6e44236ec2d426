"""The application-key format: prefix, base62 body, CRC32 checksum, digest, display prefix."""

import hashlib
import re
import string
import zlib

import pytest

from integrations.keys import display_prefix, generate_key, is_well_formed, key_digest
from integrations.models import ApiCredential
from integrations.services import credential_create

BASE62 = string.digits + string.ascii_letters


def base62_checksum(body: str) -> str:
    """An independent oracle: CRC32 of the body in base62, left-padded to 6 characters."""
    number = zlib.crc32(body.encode("utf-8"))
    digits = ""
    while number:
        number, remainder = divmod(number, 62)
        digits = BASE62[remainder] + digits
    return digits.rjust(6, "0")


def with_checksum(body: str) -> str:
    return body + base62_checksum(body)


def other_base62_char(char: str) -> str:
    return "A" if char != "A" else "B"


def test_generated_key_is_prefix_and_40_base62_characters():
    key = generate_key()

    assert re.fullmatch(r"hdk_live_[0-9A-Za-z]{40}", key)
    assert len(key) == len("hdk_live_") + 40


def test_generated_key_ends_with_a_base62_crc32_checksum_of_what_precedes_it():
    key = generate_key()

    assert key[-6:] == base62_checksum(key[:-6])


def test_generated_keys_are_random():
    keys = {generate_key() for _ in range(200)}

    assert len(keys) == 200
    # 34 random characters: the random part differs, not only the checksum.
    assert len({key[9:43] for key in keys}) == 200


def test_generated_key_is_well_formed():
    assert is_well_formed(generate_key()) is True


def test_a_key_built_with_the_documented_checksum_is_well_formed():
    assert is_well_formed(with_checksum("hdk_live_" + "a1B2c3D4e5" * 3 + "XyZ0")) is True


@pytest.mark.parametrize("position", [9, 20, 42, 43, 48])
def test_changing_any_single_character_makes_the_key_malformed(position):
    key = generate_key()
    changed = key[:position] + other_base62_char(key[position]) + key[position + 1 :]

    assert is_well_formed(changed) is False


def test_swapping_two_adjacent_characters_makes_the_key_malformed():
    key = generate_key()
    position = next(i for i in range(9, 42) if key[i] != key[i + 1])
    swapped = key[:position] + key[position + 1] + key[position] + key[position + 2 :]

    assert is_well_formed(swapped) is False


@pytest.mark.parametrize("prefix", ["hdk_test_", "HDK_LIVE_", "hdk-live-", "xyz_live_", "hdk_live", ""])
def test_a_key_with_another_prefix_is_malformed_even_with_a_matching_checksum(prefix):
    key = with_checksum(prefix + "a1B2c3D4e5" * 3 + "XyZ0")

    assert is_well_formed(key) is False


@pytest.mark.parametrize("random_length", [0, 33, 35, 60])
def test_a_key_of_the_wrong_length_is_malformed_even_with_a_matching_checksum(random_length):
    key = with_checksum("hdk_live_" + ("a1B2c3D4e5" * 7)[:random_length])

    assert is_well_formed(key) is False


def test_a_truncated_key_is_malformed():
    key = generate_key()

    assert is_well_formed(key[:-1]) is False
    assert is_well_formed(key + "0") is False


@pytest.mark.parametrize("suffix", ["\n", " ", "\x00"])
def test_trailing_whitespace_or_nul_makes_the_key_malformed(suffix):
    assert is_well_formed(generate_key() + suffix) is False


@pytest.mark.parametrize("bad_char", ["-", "_", "é", "+", "/", "="])
def test_a_non_base62_character_in_the_body_makes_the_key_malformed(bad_char):
    key = with_checksum("hdk_live_" + "a1B2c3D4e5" * 3 + "XyZ" + bad_char)

    assert is_well_formed(key) is False


def test_empty_string_is_malformed():
    assert is_well_formed("") is False


def test_digest_is_the_sha256_hex_of_the_key():
    key = generate_key()

    assert key_digest(key) == hashlib.sha256(key.encode("ascii")).hexdigest()
    assert re.fullmatch(r"[0-9a-f]{64}", key_digest(key))


def test_display_prefix_is_the_first_12_characters():
    key = generate_key()

    assert display_prefix(key) == key[:12]
    assert display_prefix(key).startswith("hdk_live_")


def test_credential_create_stores_only_the_digest_and_the_12_character_prefix(organization):
    credential, key = credential_create(organization=organization, name="ERP")

    stored = ApiCredential.objects.get(pk=credential.pk)
    assert is_well_formed(key) is True
    assert stored.key_digest == hashlib.sha256(key.encode("ascii")).hexdigest()
    assert stored.key_prefix == key[:12]
    assert stored.is_active is True
    assert stored.last_used_at is None
    assert stored.revoked_at is None
    # The full key is not kept in any column.
    row = ApiCredential.objects.filter(pk=credential.pk).values().get()
    assert all(key not in str(value) for value in row.values())
