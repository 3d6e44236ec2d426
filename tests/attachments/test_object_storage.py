"""Attachments in an S3-compatible bucket (django-storages' S3Storage), against a real server: .ci/run
starts moto_server and runs tests/attachments with AWS_STORAGE_BUCKET_NAME and AWS_S3_ENDPOINT_URL set
(every other test of the directory then runs on the bucket too)."""

from urllib.parse import parse_qs, unquote, urlsplit

import boto3
import pytest
import requests
from django.conf import settings

from tests.assertions import assert_success
from tests.attachments.samples import ACCEPTED, upload_file
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
