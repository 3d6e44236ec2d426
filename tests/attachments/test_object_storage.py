"""Attachments in an S3-compatible bucket (django-storages' S3Storage, one boto3 session per process),
against a real server: .ci/run starts moto_server and runs tests/attachments with AWS_STORAGE_BUCKET_NAME
and AWS_S3_ENDPOINT_URL set (every other test of the directory then runs on the bucket too)."""

import threading
from urllib.parse import parse_qs, unquote, urlsplit

import boto3
import pytest
import requests
from django.conf import settings

from tests.assertions import assert_success
from tests.attachments.samples import ACCEPTED, upload_file
from tickets.attachments.storage import attachment_storage
from tickets.models import Attachment

pytestmark = pytest.mark.usefixtures("s3_only")


def bucket_client():
    options = settings.STORAGES["attachments"]["OPTIONS"]
    return boto3.client(
        "s3",
        endpoint_url=options["endpoint_url"],
        aws_access_key_id=options["access_key"],
        aws_secret_access_key=options["secret_key"],
        region_name=options["region_name"] or "us-east-1",
    )


def test_the_file_is_an_object_of_the_bucket_under_a_random_key(upload, ticket):
    content, _ = ACCEPTED["pdf"]

    assert_success(upload(ticket, upload_file(content, "fatura.pdf", "application/pdf")), 201, "Anexo enviado.")

    attachment = Attachment.objects.get()
    options = settings.STORAGES["attachments"]["OPTIONS"]
    key = f"{options['location']}/{attachment.storage_key}"
    stored = bucket_client().get_object(Bucket=options["bucket_name"], Key=key)
    assert stored["Body"].read() == content
    assert "fatura" not in key


def test_the_link_redirects_to_a_short_presigned_url_that_downloads_as_the_service_would(anon_client, upload, ticket):
    content, served = ACCEPTED["docx"]
    data = assert_success(
        upload(ticket, upload_file(content, "contrato março.docx", "text/html")), 201, "Anexo enviado."
    )

    response = anon_client.get(data["url"])

    assert response.status_code == 302
    location = response["Location"]
    assert location.startswith(settings.STORAGES["attachments"]["OPTIONS"]["endpoint_url"])
    query = parse_qs(urlsplit(location).query)
    assert query["X-Amz-Expires"] == ["300"]
    assert "X-Amz-Signature" in query
    assert response["Cache-Control"] == "private, no-store"
    followed = requests.get(location, timeout=10)
    assert followed.status_code == 200
    assert followed.content == content
    assert followed.headers["Content-Type"] == served
    assert followed.headers["Content-Disposition"].startswith("attachment;")
    assert "contrato março.docx" in unquote(followed.headers["Content-Disposition"])


def test_the_bucket_refuses_the_object_without_the_signature(upload, ticket, anon_client):
    data = assert_success(upload(ticket), 201, "Anexo enviado.")
    location = anon_client.get(data["url"])["Location"]

    unsigned = location.split("?", 1)[0]

    assert requests.get(unsigned, timeout=10).status_code == 403


def test_the_web_threads_share_one_session_and_each_has_its_own_connection(upload, ticket, anon_client):
    """A session per thread parsed the S3 model once per thread (about 13 MB of a web process each)."""
    content, _ = ACCEPTED["pdf"]
    data = assert_success(upload(ticket, upload_file(content, "fatura.pdf", "application/pdf")), 201, "Anexo enviado.")
    storage = attachment_storage()
    key = Attachment.objects.get().storage_key
    connections, downloaded = [], []

    def download_in_a_thread():
        connection = storage.connection
        connections.append(connection)
        downloaded.append(requests.get(storage.url(key), timeout=10).content)

    threads = [threading.Thread(target=download_in_a_thread) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert downloaded == [content] * 4
    assert len({id(connection) for connection in connections}) == 4
    assert len({id(connection.meta.client._loader) for connection in connections}) == 1
    assert anon_client.get(data["url"]).status_code == 302
