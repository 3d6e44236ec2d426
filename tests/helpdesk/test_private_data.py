"""What the service keeps is kept private: its data directory, its database, uploads, and tokens."""

import json
import os
import stat
import subprocess
import sys
from datetime import timedelta

from django.conf import settings
from django.core import checks
from django.utils import timezone
from rest_framework.test import APIClient
from rest_framework_simplejwt.token_blacklist.models import BlacklistedToken, OutstandingToken

from helpdesk.tasks import flush_expired_tokens
from tests.factories import PASSWORD


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_data_directory_and_its_database_are_readable_by_this_user_only(tmp_path):
    data_dir = tmp_path / "var"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")} | {"DATA_DIR": str(data_dir)}

    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=settings.BASE_DIR, env=env, check=True
    )

    assert mode(data_dir) == 0o700
    for name in ("db.sqlite3", "secret_key", "jwt_signing_key"):
        assert mode(data_dir / name) == 0o600, name


def test_an_existing_data_directory_and_its_files_are_made_private_at_start(tmp_path):
    """A DATA_DIR made by an earlier version, or by hand, kept 0755 and its database 0644."""
    data_dir = tmp_path / "var"
    data_dir.mkdir(mode=0o755)
    data_dir.chmod(0o755)
    for name in ("db.sqlite3", "secret_key", "jwt_signing_key", "broker.sqlite3"):
        (data_dir / name).write_bytes(b"")
        (data_dir / name).chmod(0o644)
    (data_dir / "secret_key").write_text("an-old-key")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")} | {"DATA_DIR": str(data_dir)}

    subprocess.run([sys.executable, "manage.py", "check"], cwd=settings.BASE_DIR, env=env, check=True)

    assert mode(data_dir) == 0o700
    for name in ("db.sqlite3", "secret_key", "jwt_signing_key", "broker.sqlite3"):
        assert mode(data_dir / name) == 0o600, name
    assert (data_dir / "secret_key").read_text() == "an-old-key"


def test_a_data_directory_others_can_read_stops_the_service(settings, tmp_path):
    """What is left when the start could not tighten it (another user's directory)."""
    settings.DATA_DIR = tmp_path
    tmp_path.chmod(0o750)

    [error] = [message for message in checks.run_checks() if message.id == "helpdesk.E003"]

    assert error.is_serious()
    assert error.msg == (
        f"DATA_DIR ({tmp_path}) has mode 750: other users can read the keys, the database and the uploaded files in it."
    )
    tmp_path.chmod(0o700)
    assert [message for message in checks.run_checks() if message.id == "helpdesk.E003"] == []


def test_uploads_are_written_for_this_user_only():
    assert settings.FILE_UPLOAD_PERMISSIONS == 0o600
    assert settings.FILE_UPLOAD_DIRECTORY_PERMISSIONS == 0o700


def test_one_time_secrets_in_admin_messages_never_travel_in_a_cookie(client, admin, organization):
    client.force_login(admin)

    page = client.post("/admin/integrations/apicredential/add/", {"name": "ERP"}, follow=True)

    key = next(str(m) for m in page.context["messages"] if "hdk_live_" in str(m)).rsplit(" ", 1)[-1]
    assert key.startswith("hdk_live_")
    assert all(key not in morsel.value for morsel in page.client.cookies.values())
    assert "messages" not in page.client.cookies


def test_expired_refresh_tokens_are_flushed_and_live_blacklisted_ones_kept(admin):
    for _ in range(3):
        APIClient().post("/api/auth/login", {"email": admin.email, "senha": PASSWORD}, format="json")
    expired, blacklisted_expired, blacklisted_live = OutstandingToken.objects.order_by("created_at")
    OutstandingToken.objects.filter(pk__in=[expired.pk, blacklisted_expired.pk]).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    BlacklistedToken.objects.bulk_create(
        [BlacklistedToken(token=blacklisted_expired), BlacklistedToken(token=blacklisted_live)]
    )

    assert flush_expired_tokens() == 3  # two tokens and one blacklist row

    assert list(OutstandingToken.objects.values_list("pk", flat=True)) == [blacklisted_live.pk]
    assert list(BlacklistedToken.objects.values_list("token_id", flat=True)) == [blacklisted_live.pk]
    assert "helpdesk.flush_expired_tokens" in json.dumps(settings.CELERY_BEAT_SCHEDULE)


def test_the_token_admin_never_shows_a_token(client, django_user_model, admin):
    APIClient().post("/api/auth/login", {"email": admin.email, "senha": PASSWORD}, format="json")
    token = OutstandingToken.objects.get()
    BlacklistedToken.objects.create(token=token)
    superuser = django_user_model.objects.create_superuser(email="root@example.test", password=PASSWORD)
    client.force_login(superuser)

    pages = [
        client.get("/admin/token_blacklist/outstandingtoken/"),
        client.get(f"/admin/token_blacklist/outstandingtoken/{token.pk}/change/"),
        client.get("/admin/token_blacklist/blacklistedtoken/"),
        client.get(f"/admin/token_blacklist/blacklistedtoken/{token.blacklistedtoken.pk}/change/"),
    ]

    assert [page.status_code for page in pages] == [200, 200, 200, 200]
    assert all(token.token not in page.content.decode() for page in pages)
    assert token.jti in pages[1].content.decode()
