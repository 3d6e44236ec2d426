"""Attachments run on the embedded storage (files under a temporary DATA_DIR/attachments), and, with
AWS_STORAGE_BUCKET_NAME and AWS_S3_ENDPOINT_URL set (.ci/run starts moto_server), on a real
S3-compatible server. REQUIRE_S3 makes a run without one fail instead of testing the files only."""

import os

import boto3
import pytest
from django.conf import settings

from tests.attachments.samples import upload_file
from tests.factories import make_ticket


def object_storage_configured() -> bool:
    return settings.STORAGES["attachments"]["BACKEND"] == "tickets.attachments.object_storage.ObjectStorage"


@pytest.fixture(scope="session", autouse=True)
def _s3_bucket():
    """The run's bucket exists on the S3-compatible server (created once)."""
    if os.environ.get("REQUIRE_S3") and not object_storage_configured():
        pytest.fail("REQUIRE_S3 is set but AWS_STORAGE_BUCKET_NAME does not name a bucket")
    if not object_storage_configured():
        return
    options = settings.STORAGES["attachments"]["OPTIONS"]
    client = boto3.client(
        "s3",
        endpoint_url=options["endpoint_url"],
        aws_access_key_id=options["access_key"],
        aws_secret_access_key=options["secret_key"],
        region_name=options["region_name"] or "us-east-1",
    )
    existing = {bucket["Name"] for bucket in client.list_buckets().get("Buckets", [])}
    if options["bucket_name"] not in existing:
        client.create_bucket(Bucket=options["bucket_name"])


@pytest.fixture
def s3_only():
    """Behaviour of object storage itself (presigned redirects): CI runs these against moto_server."""
    if not object_storage_configured():
        if os.environ.get("REQUIRE_S3"):
            pytest.fail("REQUIRE_S3 is set but the attachments storage is not S3")
        pytest.skip("needs an S3-compatible server: set AWS_STORAGE_BUCKET_NAME and AWS_S3_ENDPOINT_URL (CI does)")


@pytest.fixture
def filesystem_only():
    """Behaviour of the embedded storage (the web process streams the file itself)."""
    if object_storage_configured():
        pytest.skip("the embedded storage's behaviour; this run stores attachments in S3")


@pytest.fixture
def ticket(organization):
    return make_ticket(organization)


@pytest.fixture
def upload(partner):
    """POST a file to a ticket as the partner; extra form fields and headers may be given."""

    def send(ticket, file=None, client=None, headers=None, **fields):
        data = {"arquivo": file if file is not None else upload_file(), **fields}
        url = f"/api/v1/tickets/{getattr(ticket, 'pk', ticket)}/anexos"
        return (client or partner).post(url, data, format="multipart", **(headers or {}))

    return send
